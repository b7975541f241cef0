// The embedded PostgreSQL (from the hardening review): a random password per data folder kept
// in a 0600 file, the app connecting as a role that is not a superuser (and cannot log in with the old
// fixed quiesce/quiesce), and `npm start` binding the web app to 127.0.0.1 unless HOST is set.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, test } from "vitest";
import { startEmbeddedPostgres, type EmbeddedHandle } from "../../lib/platform/db/embedded";
import { credentialsFile } from "../../lib/platform/db/embedded-config";
import { migrate } from "../../lib/platform/db/migrate";
import { planChildren } from "../../lib/start/plan";

const PORT = 54332;
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-embedded-sec-"));
chmodSync(dir, 0o755);
const dataDir = path.join(dir, "pgdata");
let server: EmbeddedHandle | undefined;
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function query(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

test("random per-folder passwords in a 0600 file; the app role is no superuser and owns only its database", async () => {
  server = await startEmbeddedPostgres({ dataDir, port: PORT });
  const file = credentialsFile(dataDir);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const creds = JSON.parse(readFileSync(file, "utf8"));
  expect(creds.superPassword).toMatch(/^[A-Za-z0-9_-]{32}$/);
  expect(creds.appPassword).not.toBe(creds.superPassword);
  await server.createDatabase("quiesce");
  const url = server.url("quiesce");
  expect(url).toContain(`${creds.appUser}:`);
  expect((await migrate(url)).applied.length).toBeGreaterThan(0);
  const [me] = await query(
    url,
    "SELECT current_user AS who, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user",
  );
  expect(me).toMatchObject({ who: creds.appUser, rolsuper: false, rolcreaterole: false, rolcreatedb: false });
  await expect(query(url, "CREATE DATABASE sneaky")).rejects.toThrow(/permission denied/);
  // The old fixed credentials and a wrong password are refused.
  await expect(query(`postgresql://quiesce:quiesce@127.0.0.1:${PORT}/quiesce`, "SELECT 1")).rejects.toThrow(/authentication failed/);
  await expect(query(`postgresql://${creds.superuser}:wrong@127.0.0.1:${PORT}/postgres`, "SELECT 1")).rejects.toThrow(
    /authentication failed/,
  );
  // A restart on the same folder keeps the same credentials.
  await server.stop();
  server = await startEmbeddedPostgres({ dataDir, port: PORT });
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(creds);
  expect((await query(server.url("quiesce"), "SELECT count(*)::int AS n FROM teams"))[0].n).toBe(0);
}, 180_000);

test("npm start binds the web app to 127.0.0.1 unless HOST is set", () => {
  const local = planChildren("/r", [], { port: 3000, dev: false, demo: false });
  expect(local[0]!.args.slice(-2)).toEqual(["-H", "127.0.0.1"]);
  const open = planChildren("/r", [], { port: 3000, dev: false, demo: false, host: "0.0.0.0" });
  expect(open[0]!.args.slice(-2)).toEqual(["-H", "0.0.0.0"]);
});
