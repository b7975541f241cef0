// Brings up everything the journeys need, for real, and tears it down afterwards:
//   a fresh database (on TEST_DATABASE_URL / DATABASE_URL's server, else embedded PostgreSQL) →
//   migrate → seed (the same `quiesce seed` a first start runs) → `next build` → `next start` on
//   port 3200 → the barrier engine (`quiesce barrier-worker`) and the simulated provider
//   (`quiesce provider-sim`) → a little live demo traffic through the machine API.
// Set QUIESCE_E2E_SKIP_BUILD=1 to reuse an existing .next build while iterating.
// Logs of the started processes: test-results/e2e-logs/.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { E2E_PORT } from "../playwright.config";
import { populate } from "./support/populate";
import { freshDatabase } from "../lib/platform/db/fresh-database";
import { setting } from "../lib/platform/config";
import { sleep } from "../lib/platform/wait";
import { ensureCliBuild } from "../lib/build/cli-build.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const LOGS = path.join(ROOT, "test-results", "e2e-logs");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const NEXT = path.join(ROOT, "node_modules", ".bin", "next");
const SIM_PORT = setting("QUIESCE_E2E_SIM_PORT");

function cli(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(TSX, ["--conditions=react-server", "bin/quiesce.ts", ...args], { cwd: ROOT, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`quiesce ${args.join(" ")} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

function commandExists(name: string): boolean {
  return readFileSync(path.join(ROOT, "bin/commands/index.ts"), "utf8").includes(`"${name}"`);
}

let stopping = false;

function start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const out = openSync(path.join(LOGS, `${name}.log`), "w");
  // detached: its own process group, so teardown can stop it and everything it spawned.
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", out, out], detached: true });
  child.on("exit", (code, signal) => {
    if (!stopping && code !== null && code !== 0) console.error(`[e2e] ${name} exited with ${code ?? signal}; see ${LOGS}/${name}.log`);
  });
  return child;
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
      resolve();
    }, 8000);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      clearTimeout(t);
      resolve();
    }
  });
}

async function waitFor(url: string, what: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before it was ready; see ${LOGS}`);
    try {
      const res = await fetch(url, { redirect: "manual" });
      if (res.status < 500) return;
    } catch {
      /* not yet */
    }
    await sleep(500);
  }
  throw new Error(`${what} did not answer at ${url} in time`);
}

export default async function globalSetup() {
  // Iterating against servers you started yourself: E2E_EXTERNAL=1 with E2E_BASE_URL, E2E_DATABASE_URL,
  // E2E_PASSWORD, E2E_KEYS_FILE (and E2E_SIM_URL, E2E_NEXTAUTH_SECRET) set; nothing is started or torn down.
  if (setting("E2E_EXTERNAL")) return async () => {};
  // Playwright cannot download a browser here (no network): it drives the system's Chromium.
  const browser = setting("CHROMIUM_PATH");
  if (!existsSync(browser)) {
    throw new Error(
      `the browser journeys need Chromium at ${browser}: install it (Debian/Ubuntu: \`apt-get install -y chromium\`) or set CHROMIUM_PATH`,
    );
  }
  mkdirSync(LOGS, { recursive: true });
  const children: ChildProcess[] = [];
  // Embedded fallback on a port of its own (54333), so it never meets the vitest servers.
  const fresh = await freshDatabase({ prefix: "quiesce_e2e", embedded: { dataDir: ".quiesce/e2e-pgdata", port: 54333 } });
  const databaseUrl = fresh.url;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "quiesce-e2e-"));
  const password = `e2e-${randomBytes(6).toString("hex")}`;
  const baseUrl = `http://127.0.0.1:${E2E_PORT}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    QUIESCE_DATA_DIR: dataDir,
    QUIESCE_DEMO_PASSWORD: password,
    QUIESCE_BCRYPT_ROUNDS: "8",
    NEXTAUTH_URL: baseUrl,
    NEXTAUTH_SECRET: randomBytes(32).toString("base64url"),
    NEXT_TELEMETRY_DISABLED: "1",
    QUIESCE_URL: baseUrl,
    PORT: String(E2E_PORT),
    // Short enough that a journey waits seconds, not minutes, for an unknown outcome to settle.
    QUIESCE_LOCAL_SETTLE_MS: "1500",
    QUIESCE_BARRIER_POLL_MS: "1000",
    // The console's live stream is rotated every few seconds instead of every minute, so every journey
    // crosses rotations and e2e/console/live-badge.spec.ts can watch several of them.
    QUIESCE_CONSOLE_STREAM_SECONDS: "4",
    // The webhook journeys deliver to receivers on 127.0.0.1, which a deployment refuses by default
    // (docs/security/hardening.md#outbound-requests): the console and the worker both judge the address.
    QUIESCE_WEBHOOK_ALLOW_PRIVATE: "127.0.0.1/32",
  };

  const teardown = async () => {
    stopping = true;
    for (const c of children.reverse()) await stop(c);
    await fresh.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    cli(["migrate"], env); // a no-op on the fresh database; proves the CLI's migrate runs clean
    const keysFile = path.join(dataDir, "demo-keys.json");
    cli(["seed", "--keys-file", keysFile, "--json"], env);
    // The simulated provider listens on its own port here, so a developer's `npm start` is untouched.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query(
      `UPDATE providers SET cancel_url = $1, status_url = $2, compensate_url = $3, job_url = $4, quiet_period_seconds = 2, settle_deadline_ms = 4000
        WHERE name = 'deploy-sim'`,
      [
        `http://127.0.0.1:${SIM_PORT}/cancel`,
        `http://127.0.0.1:${SIM_PORT}/status`,
        `http://127.0.0.1:${SIM_PORT}/compensate`,
        `http://127.0.0.1:${SIM_PORT}/jobs/{providerJobId}`,
      ],
    );
    await db.end();

    if (!setting("QUIESCE_E2E_SKIP_BUILD")) {
      console.log("[e2e] next build (a few minutes on a small machine)…");
      const b = spawnSync(NEXT, ["build"], {
        cwd: ROOT,
        env: { ...env, NODE_ENV: "production" },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      if (b.status !== 0) throw new Error(`next build failed:\n${b.stdout}\n${b.stderr}`);
    }
    // Next behind the project's front (lib/start/web-front.ts), as `npm start` runs it. The journeys act
    // as a reverse proxy on 127.0.0.1 (X-Forwarded-For names the client), so 127.0.0.1 is trusted here;
    // a peer on any other loopback address is a client speaking for itself.
    const { dir: built } = await ensureCliBuild(ROOT, (line) => console.log(`[e2e] ${line}`));
    const web = start("next", process.execPath, [path.join(built, "web.mjs"), "start", "-p", String(E2E_PORT), "-H", "127.0.0.1"], {
      ...env,
      NODE_ENV: "production",
      QUIESCE_TRUSTED_PROXIES: "127.0.0.1",
    });
    children.push(web);
    if (commandExists("provider-sim"))
      children.push(
        start("provider-sim", TSX, ["--conditions=react-server", "bin/quiesce.ts", "provider-sim", "--port", String(SIM_PORT)], env),
      );
    if (commandExists("barrier-worker"))
      children.push(start("barrier-worker", TSX, ["--conditions=react-server", "bin/quiesce.ts", "barrier-worker"], env));
    else console.warn("[e2e] no barrier-worker command registered: kills will not reach a receipt");
    // Webhooks: a short, injected retry schedule so a dead letter appears within seconds.
    if (commandExists("webhook-worker"))
      children.push(
        start("webhook-worker", TSX, ["--conditions=react-server", "bin/quiesce.ts", "webhook-worker"], {
          ...env,
          QUIESCE_WEBHOOK_RETRY_BASE_MS: "200",
          QUIESCE_WEBHOOK_RETRY_MAX_MS: "500",
          QUIESCE_WEBHOOK_MAX_ATTEMPTS: "3",
          QUIESCE_WEBHOOK_POLL_MS: "200",
        }),
      );
    await waitFor(`${baseUrl}/signin`, "next start", web);

    const keys = JSON.parse(readFileSync(keysFile, "utf8")) as { keys: Record<string, { secret: string }> };
    await populate(baseUrl, keys.keys.agent!.secret);

    process.env.E2E_BASE_URL = baseUrl;
    process.env.E2E_DATABASE_URL = databaseUrl;
    process.env.E2E_PASSWORD = password;
    process.env.E2E_KEYS_FILE = keysFile;
    process.env.E2E_SIM_URL = `http://127.0.0.1:${SIM_PORT}`;
    // The server's session secret: the server-action matrix mints expired and forged session cookies.
    process.env.E2E_NEXTAUTH_SECRET = env.NEXTAUTH_SECRET;
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
