// The prebuilt CLI (lib/build/cli-build.mjs): built once, rebuilt exactly when an input changes, and the
// real build runs the real commands in plain Node — no tsx loader in the process, so a TypeScript file
// reached at run time would fail to load. The API process from the build answers a gate call over HTTP
// against this run's database, and `quiesce together` runs two commands in one process and stops both.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildCli, checkCliBuild, ensureCliBuild, routeFiles } from "../../lib/build/cli-build.mjs";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { ensureTeam } from "../../lib/modules/members/admin-directory";
import { createRun } from "../../lib/modules/runs/register/create-run";
import { newId } from "../../lib/platform/ids";
import { freePort } from "../support/pg-local";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SYSTEM = { type: "system", name: "prebuilt-test" } as const;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A tiny repository: the build's entries, one route file, and this checkout's node_modules. */
let fake = "";
beforeAll(() => {
  fake = mkdtempSync(path.join(tmpdir(), "quiesce-prebuilt-"));
  const put = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(fake, rel)), { recursive: true });
    writeFileSync(path.join(fake, rel), text);
  };
  cpSync(path.join(ROOT, "lib/build/cli-build.mjs"), path.join(fake, "lib/build/cli-build.mjs"));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(fake, "node_modules"));
  put("lib/build/current.ts", "export const BUILT_DIR: string | null = null;\n");
  put("lib/api/route-modules.ts", "export const routeModules: Record<string, () => Promise<unknown>> | undefined = undefined;\n");
  put("lib/util/where.ts", "export const here = import.meta.dirname;\nexport const greeting = 'one';\n");
  put(
    "bin/quiesce.ts",
    [
      'import { here, greeting } from "../lib/util/where";',
      'import { routeModules } from "@/lib/api/route-modules";',
      'import { BUILT_DIR } from "../lib/build/current";',
      "const mods = routeModules ?? {};",
      "const loaded = await Promise.all(Object.entries(mods).map(async ([k, load]) => [k, Object.keys((await load()) as object)]));",
      "console.log(JSON.stringify({ here, greeting, built: BUILT_DIR, routes: Object.fromEntries(loaded) }));",
    ].join("\n"),
  );
  put("lib/start/prepare.ts", "console.log('prepare');\n");
  put("lib/start/web-main.ts", "console.log('web');\n");
  put("app/api/v1/ping/route.ts", "export function GET() { return new Response('pong'); }\n");
});
afterAll(() => rmSync(fake, { recursive: true, force: true }));

test("a build runs in plain node: our files bundled, import.meta.dirname still the source folder, the route table filled in", async () => {
  expect((await checkCliBuild(fake)).fresh).toBe(false);
  const first = await ensureCliBuild(fake);
  expect(first.built).toBe(true);
  for (const f of ["quiesce.mjs", "prepare.mjs"]) expect(existsSync(path.join(first.dir, f))).toBe(true);
  const out = await run([path.join(first.dir, "quiesce.mjs")]);
  expect(out.stderr).toBe("");
  const said = JSON.parse(out.stdout) as { here: string; greeting: string; built: string; routes: Record<string, string[]> };
  expect(said.here).toBe(path.join(fake, "lib/util"));
  expect(said.built).toBe(first.dir);
  expect(said.routes).toEqual({ "api/v1/ping/route.ts": ["GET"] });
  // Nothing changed: no second build.
  expect(await ensureCliBuild(fake)).toEqual({ dir: first.dir, built: false });
});

test("two builds of the same inputs at the same moment both succeed, with one result", async () => {
  const [a, b] = await Promise.all([buildCli(fake), buildCli(fake)]);
  expect(a.dir).toBe(b.dir);
  expect((await checkCliBuild(fake)).fresh).toBe(true);
  expect(JSON.parse((await run([path.join(a.dir, "quiesce.mjs")])).stdout).greeting).toBe("one");
});

test("rebuilt exactly when needed: an input's content, a new route file, a removed input", async () => {
  await ensureCliBuild(fake);
  expect((await checkCliBuild(fake)).fresh).toBe(true);
  // Touching a file without changing it is not a change (content hash, not mtime).
  writeFileSync(path.join(fake, "lib/util/where.ts"), readFileSync(path.join(fake, "lib/util/where.ts")));
  expect((await checkCliBuild(fake)).fresh).toBe(true);

  writeFileSync(path.join(fake, "lib/util/where.ts"), "export const here = import.meta.dirname;\nexport const greeting = 'two';\n");
  expect(await checkCliBuild(fake)).toMatchObject({ fresh: false, reason: "a source file changed" });
  const second = await ensureCliBuild(fake);
  expect(second.built).toBe(true);
  expect(JSON.parse((await run([path.join(second.dir, "quiesce.mjs")])).stdout).greeting).toBe("two");

  mkdirSync(path.join(fake, "app/api/v1/pong"), { recursive: true });
  writeFileSync(path.join(fake, "app/api/v1/pong/route.ts"), "export function POST() { return new Response('ping'); }\n");
  expect(routeFiles(fake)).toEqual(["api/v1/ping/route.ts", "api/v1/pong/route.ts"]);
  expect(await checkCliBuild(fake)).toMatchObject({ fresh: false, reason: "a route file was added or removed" });
  const third = await buildCli(fake);
  expect(JSON.parse((await run([path.join(third.dir, "quiesce.mjs")])).stdout).routes).toEqual({
    "api/v1/ping/route.ts": ["GET"],
    "api/v1/pong/route.ts": ["POST"],
  });

  rmSync(path.join(fake, "lib/util/where.ts"));
  expect(await checkCliBuild(fake)).toMatchObject({ fresh: false, reason: "a source file was removed" });
  // A build that fails (the import is gone) leaves the last good build in place.
  await expect(buildCli(fake)).rejects.toThrow();
  expect(existsSync(path.join(third.dir, "quiesce.mjs"))).toBe(true);
});

test("the real build: CLI commands run without tsx, bad usage exits 2, the API process answers a gate call", async () => {
  const { dir } = await ensureCliBuild(ROOT);
  const cli = ["--conditions=react-server", path.join(dir, "quiesce.mjs")];
  const help = await run([...cli, "help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(/together/);
  const bad = await run([...cli, "together", "barrier-worker"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/at least two commands/);
  const notLong = await run([...cli, "together", "barrier-worker", "+", "kill"]);
  expect(notLong.code).toBe(2);
  expect(notLong.stderr).toMatch(/not a long-running command: kill/);

  const team = (await ensureTeam(SYSTEM, { slug: `prebuilt-${Date.now()}`, name: "Prebuilt" })).team;
  const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "prebuilt agent" });
  const r = await createRun(SYSTEM, { taskId: "prebuilt", teamId: team.id });
  const port = await freePort();
  const api = spawn(process.execPath, [...cli, "api", "--port", String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  api.stdout.on("data", (d) => (out += d));
  api.stderr.on("data", (d) => (out += d));
  try {
    let res: Response | undefined;
    for (let i = 0; i < 100 && !res; i++) {
      res = await fetch(`http://127.0.0.1:${port}/api/v1/gate`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "test.noop" }),
      }).catch(() => undefined);
      if (!res) await new Promise((ok) => setTimeout(ok, 200));
    }
    expect(res?.status, out).toBe(200);
    expect(((await res!.json()) as { decision: string }).decision).toBe("allow");
  } finally {
    const exited = new Promise((ok) => api.once("exit", ok));
    api.kill("SIGTERM");
    await exited;
  }
  expect(out).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|failed to load/);
}, 120_000);

test("quiesce together: two long-running commands in one process; SIGTERM stops both, exit 0", async () => {
  const { dir } = await ensureCliBuild(ROOT);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--conditions=react-server", path.join(dir, "quiesce.mjs"), "together", "provider-sim", "--port", String(port), "+", "webhook-worker"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    up = await fetch(`http://127.0.0.1:${port}/status`).then(
      () => true,
      () => false,
    );
    if (!up) await new Promise((ok) => setTimeout(ok, 200));
  }
  expect(up, out).toBe(true);
  for (let i = 0; i < 50 && !out.includes("delivering the webhook outbox"); i++) await new Promise((ok) => setTimeout(ok, 200));
  expect(out).toMatch(/delivering the webhook outbox/);
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  // The provider simulator closed its port.
  expect(
    await fetch(`http://127.0.0.1:${port}/status`).then(
      () => "open",
      () => "closed",
    ),
  ).toBe("closed");
}, 120_000);

test("quiesce together: a member that fails stops the others and the process exits non-zero", async () => {
  const { dir } = await ensureCliBuild(ROOT);
  const busy = net.createServer();
  await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", () => ok()));
  const port = (busy.address() as net.AddressInfo).port;
  try {
    // provider-sim cannot listen on a busy port; the webhook worker must not keep the process alive.
    const r = await run([
      "--conditions=react-server",
      path.join(dir, "quiesce.mjs"),
      "together",
      "webhook-worker",
      "+",
      "provider-sim",
      "--port",
      String(port),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/provider-sim ended \(exit code 1\) while the others ran; stopping them/);
  } finally {
    busy.close();
  }
}, 120_000);
