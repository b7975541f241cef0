// Everything an eval run starts, each as its own OS process sharing nothing but PostgreSQL:
//   the web app (next start, or the route handlers without Next) · the barrier engine
//   (`quiesce barrier-worker`, sharded to the eval team) · the simulated provider
//   (`quiesce provider-sim`) · two worker/gateway pods running the SDK worker guard.
// The harness process itself plays the operator (operator key over HTTP) and the queue (it hands
// stamped jobs to the pods). Processes are shared across cases; a case that restarts or kills one
// (restart survival, the engine crash) does it through the methods here.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import { closeDbClients } from "../../lib/start/database";
import type { DrillContext } from "../../lib/drill/types";
import { freshDatabase, type EvalDatabase } from "./database";
import { freePort } from "./ports";
import { spawnCli, waitUntil, type Proc } from "./proc";
import { chooseWebServer, WebApp } from "./web";
import { Pod } from "./pod";
import { createFixtures, SIM_PROVIDER, type Fixtures } from "./fixtures";
import { dbInspector } from "./db-inspector";

/** How long a plain tool call without a provider may stay unsettled before the engine calls it unknown. */
export const LOCAL_SETTLE_MS = 1500;

export class Stack {
  db!: EvalDatabase;
  web!: WebApp;
  sim!: { proc: Proc; url: string; client: SimProviderClient };
  engine!: Proc;
  worker!: Pod;
  pod!: Pod;
  fx!: Fixtures;
  scratchDir!: string;
  readonly tag = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  private constructor(
    readonly logDir: string,
    readonly log: (l: string) => void,
  ) {}

  /** What every child process gets: the eval run's database and nothing else from us. */
  baseEnv(): Record<string, string> {
    return { DATABASE_URL: this.db.url };
  }

  static async up(logDir: string, log: (l: string) => void): Promise<Stack> {
    const s = new Stack(logDir, log);
    const choice = chooseWebServer();
    s.db = await freshDatabase(log);
    // Fixtures and observation in this process go to the same fresh database.
    process.env.DATABASE_URL = s.db.url;
    s.scratchDir = await mkdtemp(path.join(os.tmpdir(), "quiesce-evals-"));
    const [simPort, webPort] = [await freePort(), await freePort()];
    const simUrl = `http://127.0.0.1:${simPort}`;
    log(`web app: ${choice.kind} (${choice.reason})`);
    const simProc = spawnCli("provider-sim", ["provider-sim", "--port", String(simPort)], { env: s.baseEnv(), logDir });
    s.sim = { proc: simProc, url: simUrl, client: new SimProviderClient(simUrl) };
    s.web = new WebApp(choice, webPort, s.baseEnv(), logDir);
    const [fx] = await Promise.all([
      createFixtures(simUrl, s.tag),
      s.web.start(),
      waitUntil(
        "provider-sim",
        async () => {
          if (!simProc.alive()) throw new Error(`provider-sim exited:\n${simProc.tail()}`);
          return (await fetch(`${simUrl}/health`).catch(() => null))?.ok ?? false;
        },
        120_000,
        300,
      ),
    ]);
    s.fx = fx;
    s.engine = s.startEngine("barrier-worker", fx.main.teamId);
    s.worker = new Pod("worker-1", s.podEnv(), logDir);
    s.pod = new Pod("pod-2", s.podEnv(), logDir);
    await Promise.all([s.worker.start(), s.pod.start()]);
    await waitUntil(
      "the barrier engine to start",
      async () => {
        if (!s.engine.alive()) throw new Error(`barrier-worker exited:\n${s.engine.tail()}`);
        return /barrier engine .* started/.test(s.engine.tail(50));
      },
      120_000,
      200,
    );
    log(
      `up: web ${s.web.url} (pid ${s.web.proc.pid}), barrier-worker pid ${s.engine.pid}, provider-sim ${simUrl} (pid ${simProc.pid}), ${s.worker.label}, ${s.pod.label}`,
    );
    return s;
  }

  /** A worker pod's environment: the web app's URL and the eval team's worker key (plus `extra`). */
  podEnv(extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.baseEnv(), QUIESCE_URL: this.web.url, QUIESCE_API_KEY: this.fx.main.keys.worker!, ...extra };
  }

  /** A barrier engine process that only works `teamId`'s barriers. */
  startEngine(name: string, teamId: string, env: Record<string, string> = {}, id = name): Proc {
    return spawnCli(name, ["barrier-worker", "--team", teamId, "--id", id, "--poll-ms", "500"], {
      env: { ...this.baseEnv(), QUIESCE_LOCAL_SETTLE_MS: String(LOCAL_SETTLE_MS), ...env },
      logDir: this.logDir,
    });
  }

  /** Null while every shared process runs; otherwise which one died (the remaining cases are not run). */
  health(): string | null {
    const procs = [this.web?.proc, this.engine, this.sim?.proc, this.worker?.proc, this.pod?.proc];
    const dead = procs.find((p) => p && !p.alive());
    return dead ? `${dead.name} (pid ${dead.pid}) is no longer running:\n${dead.tail(15)}` : null;
  }

  client(key: string): QuiesceClient {
    return new QuiesceClient({ url: this.web.url, apiKey: key, timeoutMs: 30_000 });
  }

  /** The drill context: the eval team's keys, the pods as executors, the provider, the DB inspector. */
  drillContext(): DrillContext {
    const k = this.fx.main.keys;
    return {
      baseUrl: this.web.url,
      operator: this.client(k.operator!),
      agent: this.client(k.agent!),
      worker: this.worker,
      pod: this.pod,
      sim: { client: this.sim.client, url: this.sim.url, provider: SIM_PROVIDER },
      viewer: this.client(k.viewer!),
      otherTeam: this.client(this.fx.other.keys.operator!),
      // The worker key registers none of the drills' runs: same team, not the holder.
      stranger: this.client(k.worker!),
      db: dbInspector(this.fx.main),
      markDrill: false,
      tag: `ev${this.tag}`,
      receiptTimeoutMs: 60_000,
      scratchDir: this.scratchDir,
      log: this.log,
    };
  }

  describe(): Record<string, unknown> {
    return {
      webApp: { kind: this.web.choice.kind, reason: this.web.choice.reason, url: this.web.url, pid: this.web.proc.pid },
      database: { name: this.db.name, server: this.db.server },
      processes: {
        barrierEngine: { pid: this.engine.pid, team: this.fx.main.slug, localSettleMs: LOCAL_SETTLE_MS },
        providerSim: { pid: this.sim.proc.pid, url: this.sim.url },
        pods: [this.worker.label, this.pod.label],
      },
      logs: this.logDir,
    };
  }

  async down(keepDb = false): Promise<void> {
    await Promise.allSettled([this.worker?.close(), this.pod?.close()]);
    await Promise.allSettled([this.engine?.stop("SIGTERM"), this.sim?.proc.stop("SIGTERM"), this.web?.stop()]);
    await closeDbClients();
    if (this.db && !keepDb) await this.db.drop();
    else if (this.db) this.log(`kept database ${this.db.name} (${this.db.url.replace(/:[^:@/]*@/, ":***@")})`);
  }
}
