// `npm start` = `quiesce start`: database (embedded when DATABASE_URL is unset) → migrate → seed →
// `next build` when the build is missing or stale → the web app plus every registered companion
// (barrier-worker, provider-sim, demo) as child processes with prefixed output. Ctrl-C / SIGTERM stops
// them all and the embedded server; a crashed child is reported loudly and never silently restarted.
import path from "node:path";
import { randomBytes } from "node:crypto";
import net from "node:net";
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { spawn } from "node:child_process";
import type { PrepareResult } from "../../lib/start/prepare";
import { checkBuild } from "../../lib/start/build-check";
import { closeDbClients, openDatabaseHosted, redactUrl, type DatabaseHandle } from "../../lib/start/database";
import { childEnv, demoEnabled, parsePort, planChildren } from "../../lib/start/plan";
import { ensureAuthSecret } from "../../lib/start/secret";
import { Supervisor } from "../../lib/start/supervisor";
import { setting } from "../../lib/platform/config";
import { COMMAND_NAMES } from "./names";
import { sleep } from "../../lib/platform/wait";
import { BUILT_DIR } from "../../lib/build/current";

const ROOT = path.resolve(import.meta.dirname, "../..");
const say = (line: string) => console.log(`${"[start]".padEnd(16)} ${line}`);

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

async function waitForHttp(url: string, gaveUp: () => boolean): Promise<boolean> {
  const started = Date.now();
  let nextNote = 15_000;
  while (!gaveUp()) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000), redirect: "manual" });
      return true;
    } catch {
      /* not listening yet */
    }
    if (Date.now() - started > nextNote) {
      say(`still waiting for the web app at ${url} …`);
      nextNote += 15_000;
    }
    await sleep(500);
  }
  return false;
}

/** Runs lib/start/prepare.ts (migrate, seed, signing key) as a child process and returns what it seeded. */
function prepare(env: NodeJS.ProcessEnv): Promise<PrepareResult> {
  const entry = BUILT_DIR ? [path.join(BUILT_DIR, "prepare.mjs")] : ["--import", "tsx", path.join(ROOT, "lib/start/prepare.ts")];
  const child = spawn(process.execPath, ["--conditions=react-server", ...entry], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    let answer: PrepareResult | { type: "error"; message: string } | undefined;
    child.on("message", (m: PrepareResult | { type: "error"; message: string }) => {
      answer = m;
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (answer?.type === "ready") resolve(answer);
      else if (answer?.type === "error") reject(new Error(answer.message));
      else reject(new Error(`preparing the database ended (${signal ?? `exit code ${code}`}) without an answer`));
    });
  });
}

function loud(lines: string[]): void {
  const bar = "!".repeat(72);
  console.error([bar, ...lines.map((l) => `!! ${l}`), bar].join("\n"));
}

export const startCommand: Command = {
  summary: "run Quiesce: database, migrations, demo data, web app and workers (npm start)",
  usage:
    "npm start -- [--port 3000] [--no-demo] [--dev]   (env: DATABASE_URL, PORT, QUIESCE_DEMO=0, QUIESCE_SKIP_BUILD=1, QUIESCE_DEMO_PASSWORD)",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      port: { type: "string" },
      "no-demo": { type: "boolean" },
      dev: { type: "boolean" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    let port: number;
    try {
      port = values.port !== undefined ? parsePort(values.port, "--port") : setting("PORT");
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    // Only this machine can reach the console unless HOST names another interface (e.g. 0.0.0.0).
    const apiPort = setting("QUIESCE_API_PORT");
    const simPort = setting("QUIESCE_PROVIDER_SIM_PORT");
    const opts = {
      port,
      dev: values.dev ?? false,
      demo: demoEnabled(values["no-demo"], process.env),
      host: setting("HOST"),
      apiPort,
      simPort,
      builtDir: BUILT_DIR,
    };
    const plan = planChildren(ROOT, COMMAND_NAMES, opts);
    const withApi = plan.some((c) => c.name === "api");

    for (const p of [port, ...(withApi ? [apiPort] : []), ...(plan.some((c) => c.members.includes("provider-sim")) ? [simPort] : [])]) {
      if (await portInUse(p)) {
        console.error(
          `error: port ${p} is already in use (another \`npm start\`?). ${p === port ? "Pass --port <n> or set PORT." : p === apiPort ? "Set QUIESCE_API_PORT." : p === simPort ? "Set QUIESCE_PROVIDER_SIM_PORT." : "Stop whatever holds it."}`,
        );
        return 1;
      }
    }

    let db: DatabaseHandle | undefined;
    let finished: (code: number) => void = () => {};
    const done = new Promise<number>((r) => {
      finished = r;
    });
    let shuttingDown = false;
    const sup = new Supervisor({
      onUnexpectedExit: (name, code, signal) => {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const spec = plan.find((c) => c.name === name);
        const essential = spec?.essential ?? false;
        const settles = spec?.members.includes("barrier-worker") ?? false;
        loud([
          `${name} ${how}. It is NOT restarted.`,
          essential
            ? "Stopping everything."
            : `Everything else keeps running; ${settles ? "kills will not settle until it runs again" : `${name} is down`}.`,
          "Read its output above, fix the cause, then restart `npm start`.",
        ]);
        if (essential) void shutdown(1);
      },
    });
    const shutdown = async (code: number) => {
      if (shuttingDown) return;
      shuttingDown = true;
      say("stopping …");
      await sup.stopAll();
      await closeDbClients();
      if (db?.owned) {
        say("stopping embedded PostgreSQL");
        const stopped = db.stop().then(
          () => true,
          (e) => {
            console.error(`[start] ${e}`);
            return true;
          },
        );
        const gaveUp = new Promise<false>((r) => setTimeout(() => r(false), 15_000).unref());
        if (!(await Promise.race([stopped, gaveUp]))) say("embedded PostgreSQL did not confirm its stop within 15 s; leaving it");
      }
      say("stopped");
      finished(code);
    };
    // Under `npm start` a Ctrl-C arrives twice (from the terminal and relayed by tsx): act once.
    const onSignal = (sig: NodeJS.Signals) => {
      if (!shuttingDown) say(`${sig} received`);
      void shutdown(0);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);

    try {
      db = await openDatabaseHosted(say);
      if (shuttingDown) return await done;
      say(`database ${redactUrl(db.url)}`);
      // Migrations, demo data and the signing key, in a process of its own (lib/start/prepare.ts).
      const seeded = await prepare({ ...process.env, DATABASE_URL: db.url, PORT: String(port) });
      if (shuttingDown) return await done;
      const secret = ensureAuthSecret();
      const keys = seeded.keys;
      const env = childEnv(process.env, {
        databaseUrl: db.url,
        port,
        simPort,
        authSecret: secret.secret,
        frontSecret: randomBytes(32).toString("base64url"),
        keys,
        ...(withApi ? { apiPort } : {}),
      });

      if (!opts.dev && !shuttingDown) {
        const check = checkBuild(ROOT);
        if (check.needed && setting("QUIESCE_SKIP_BUILD")) {
          say(`QUIESCE_SKIP_BUILD=1: not building although ${check.reason}`);
        } else if (check.needed) {
          say(`building the web app (${check.reason}); this takes a minute or two …`);
          const build = sup.spawn(
            "build",
            process.execPath,
            [path.join(ROOT, "node_modules/next/dist/bin/next"), "build"],
            { ...env, NEXT_TELEMETRY_DISABLED: "1" },
            ROOT,
            { oneShot: true },
          );
          const r = await build.exited;
          if (shuttingDown) return await done;
          if (r.code !== 0) {
            loud([
              `next build failed (${r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`}); see the [build] lines above.`,
              "Nothing else was started.",
            ]);
            await shutdown(1);
            return await done;
          }
          say("build finished");
        }
      }
      if (shuttingDown) return await done;

      for (const c of plan.filter((x) => !x.afterWeb)) sup.spawn(c.name, c.command, c.args, env, ROOT);
      const webUp =
        (await waitForHttp(`http://127.0.0.1:${port}/`, () => shuttingDown)) &&
        (!withApi || (await waitForHttp(`http://127.0.0.1:${apiPort}/api/v1/openapi.json`, () => shuttingDown)));
      if (webUp) {
        for (const c of plan.filter((x) => x.afterWeb)) sup.spawn(c.name, c.command, c.args, env, ROOT);
        const running = plan.map((c) => (c.members.length > 1 ? `${c.name} (${c.members.join(" + ")})` : c.name)).join(", ");
        console.log(`\n  Quiesce is up: http://localhost:${port}   (running: ${running})`);
        console.log(`  Machine API for agents: http://localhost:${port}/api/v1   (QUIESCE_URL for your agents)`);
        console.log(`  Demo sign-ins and keys: ${seeded.keysFile}   ·   Ctrl-C stops everything\n`);
        const missing = ["barrier-worker", "provider-sim", "demo"].filter((n) => !plan.some((c) => c.members.includes(n)));
        if (missing.length) say(`not started (not registered${opts.demo ? "" : " or turned off"}): ${missing.join(", ")}`);
      }
    } catch (err) {
      console.error(`error: ${(err as Error).message ?? err}`);
      await shutdown(1);
    }
    const code = await done;
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    // Everything is stopped; should a stray handle keep the event loop alive, do not hang at the prompt.
    setTimeout(() => process.exit(code), 3000).unref();
    return code;
  },
};
