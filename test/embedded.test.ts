// The zero-config path really works: the embedded PostgreSQL of lib/platform/db/embedded.ts starts on its own
// port and data folder, takes the migrations, stores a row written through Prisma, and still has it
// after a stop and a restart on the same folder. The CLI's DATABASE_URL-less path uses the same server.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, expect, test } from "vitest";
import { PrismaClient } from "../lib/generated/prisma/client";
import { startEmbeddedPostgres, type EmbeddedHandle } from "../lib/platform/db/embedded";
import { migrate } from "../lib/platform/db/migrate";
import { newId } from "../lib/platform/ids";
import { runCli } from "./cli/run-cli";

const PORT = 54331;
// As root the server runs as the `postgres` OS user, which must be able to reach the folder.
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-embedded-"));
chmodSync(dir, 0o755);
const dataDir = path.join(dir, "pgdata");
let server: EmbeddedHandle | undefined;

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

async function withPrisma<T>(url: string, fn: (p: PrismaClient) => Promise<T>): Promise<T> {
  const p = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  try {
    return await fn(p);
  } finally {
    await p.$disconnect();
  }
}

test("embedded PostgreSQL: start, migrate, write through Prisma, stop, restart on the same folder, row still there", async () => {
  server = await startEmbeddedPostgres({ dataDir, port: PORT });
  expect(server.owned).toBe(true);
  await server.createDatabase("quiesce");
  const url = server.url("quiesce");
  expect(url).toContain(`:${PORT}/quiesce`);
  expect((await migrate(url)).applied.length).toBeGreaterThan(0);

  const id = newId("team");
  await withPrisma(url, (p) => p.team.create({ data: { id, slug: id.toLowerCase(), name: "Persisted" } }));

  // A second start while it runs reuses the server instead of starting another on the same folder.
  const again = await startEmbeddedPostgres({ dataDir, port: PORT });
  expect(again.owned).toBe(false);
  await again.stop(); // not ours: a no-op
  expect(await listening(PORT)).toBe(true);

  await server.stop();
  server = undefined;
  expect(await listening(PORT)).toBe(false);

  server = await startEmbeddedPostgres({ dataDir, port: PORT });
  expect(server.owned).toBe(true);
  expect((await migrate(url)).applied).toEqual([]);
  const team = await withPrisma(url, (p) => p.team.findUnique({ where: { id } }));
  expect(team?.name).toBe("Persisted");
  await server.stop();
  server = undefined;
}, 120_000);

test("without DATABASE_URL the CLI starts the embedded server itself, and stops it again", async () => {
  const env: Record<string, string | undefined> = {
    DATABASE_URL: undefined,
    QUIESCE_EMBEDDED_PG_PORT: String(PORT),
    QUIESCE_DATA_DIR: dir,
  };
  const r = await runCli(["migrate", "--json"], env);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ applied: [], alreadyApplied: expect.any(Number) });
  expect(await listening(PORT)).toBe(false);
}, 120_000);
