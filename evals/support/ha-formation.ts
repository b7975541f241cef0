// A pg_auto_failover formation on this machine for the HA drill: a monitor, a primary and a
// synchronous standby (pg_autoctl, temporary folders, free local ports, run as `postgres`), and one
// PgBouncer in transaction mode in front of each data node. Clients use multi-host strings with
// target_session_attrs=read-write over the two bouncers (pooled) or the two nodes (direct, for
// LISTEN and migrations), so after a failover they find the new primary (lib/platform/db/hosts.ts).
import { type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import {
  descendants,
  freePort,
  pgBinDir,
  spawnAsPostgres,
  startPgBouncer,
  tempDir,
  waitFor,
  type LocalBouncer,
} from "../../test/support/pg-local";

interface Node {
  name: string;
  port: number;
  pgdata: string;
  keeper: ChildProcess;
}

export interface FormationState {
  name: string;
  port: number;
  reported: string;
  goal: string;
}

export class HaFormation {
  monitorPort = 0;
  nodes: Node[] = [];
  bouncers: LocalBouncer[] = [];
  private monitor!: ChildProcess;
  private constructor(
    readonly dir: string,
    readonly logDir: string,
    readonly log: (l: string) => void,
  ) {}

  static async up(logDir: string, log: (l: string) => void): Promise<HaFormation> {
    for (const bin of ["pg_autoctl", "pgbouncer"]) {
      if (!fs.existsSync(`/usr/bin/${bin}`) && !fs.existsSync(`/usr/sbin/${bin}`)) {
        throw new Error(`${bin} not found: apt-get install postgresql-15-auto-failover pg-auto-failover-cli pgbouncer`);
      }
    }
    const f = new HaFormation(tempDir("quiesce-ha-"), logDir, log);
    f.monitorPort = await freePort();
    f.monitor = f.autoctl("monitor", [
      "create",
      "monitor",
      "--pgdata",
      path.join(f.dir, "monitor"),
      "--pgport",
      String(f.monitorPort),
      "--auth",
      "trust",
      "--no-ssl",
      "--hostname",
      "127.0.0.1",
      "--run",
    ]);
    await waitFor(
      async () => (await f.monitorQuery("SELECT 1").catch(() => null)) !== null,
      60_000,
      "pg_auto_failover monitor did not start",
    );
    // Detect a lost primary within seconds rather than the defaults' tens of seconds; the demote
    // timeout is how long the monitor waits for an unreachable primary to demote itself before the
    // standby takes writes (docs/deploy.md#pg_auto_failover).
    for (const [k, v] of [
      ["health_check_period", 1000],
      ["health_check_timeout", 1000],
      ["health_check_max_retries", 1],
      ["health_check_retry_delay", 500],
      ["node_considered_unhealthy_timeout", 2000],
      ["primary_demote_timeout", 5000],
    ] as const) {
      await f.monitorQuery(`ALTER SYSTEM SET pgautofailover.${k} = ${v}`);
    }
    await f.monitorQuery("SELECT pg_reload_conf()");
    await f.addNode("node_1");
    await waitFor(async () => (await f.states()).some((s) => s.reported === "single"), 90_000, "node_1 did not become the primary");
    await f.addNode("node_2");
    await waitFor(
      async () => {
        const s = await f.states();
        return s.some((x) => x.reported === "primary") && s.some((x) => x.reported === "secondary");
      },
      120_000,
      "node_2 did not become a synchronous standby",
    );
    for (const n of f.nodes) f.bouncers.push(await startPgBouncer({ host: "127.0.0.1", port: n.port }, { poolSize: 20 }));
    return f;
  }

  private autoctl(name: string, args: string[]): ChildProcess {
    const child = spawnAsPostgres("env", [`PATH=${pgBinDir()}:${process.env.PATH}`, "pg_autoctl", ...args]);
    const out = fs.createWriteStream(path.join(this.logDir, `pg_autoctl-${name}.log`), { flags: "a" });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    return child;
  }

  private async addNode(name: string): Promise<void> {
    const port = await freePort();
    const pgdata = path.join(this.dir, name);
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`;
    const keeper = this.autoctl(name, [
      "create",
      "postgres",
      "--pgdata",
      pgdata,
      "--pgport",
      String(port),
      "--auth",
      "trust",
      "--no-ssl",
      "--hostname",
      "127.0.0.1",
      "--name",
      name,
      "--monitor",
      monitorUri,
      "--run",
    ]);
    this.nodes.push({ name, port, pgdata, keeper });
  }

  async monitorQuery(sql: string): Promise<pg.QueryResult> {
    const c = new pg.Client({
      host: "127.0.0.1",
      port: this.monitorPort,
      user: "postgres",
      database: "pg_auto_failover",
      connectionTimeoutMillis: 2000,
    });
    c.on("error", () => {});
    try {
      await c.connect();
      return await c.query(sql);
    } finally {
      await c.end().catch(() => {});
    }
  }

  async states(): Promise<FormationState[]> {
    const r = await this.monitorQuery(
      "SELECT nodename, nodeport, reportedstate::text, goalstate::text FROM pgautofailover.node ORDER BY nodeid",
    ).catch(() => null);
    return (r?.rows ?? []).map((x: Record<string, unknown>) => ({
      name: String(x.nodename),
      port: Number(x.nodeport),
      reported: String(x.reportedstate),
      goal: String(x.goalstate),
    }));
  }

  async primary(): Promise<Node> {
    const s = await this.states();
    // The monitor's goal state, not the last reported one: a dead primary keeps reporting "primary".
    const p = s.find((x) => ["primary", "single", "wait_primary"].includes(x.goal));
    const n = this.nodes.find((x) => x.name === p?.name);
    if (!n) throw new Error(`no primary in ${JSON.stringify(s)}`);
    return n;
  }

  /** Multi-host, read-write only: over the bouncers (pooled) or straight to the nodes (direct). */
  url(db: string, via: "pooled" | "direct"): string {
    const ports = via === "pooled" ? this.bouncers.map((b) => b.port) : this.nodes.map((n) => n.port);
    return `postgresql://postgres@${ports.map((p) => `127.0.0.1:${p}`).join(",")}/${db}?target_session_attrs=read-write`;
  }

  /** The primary's machine dies: its keeper and every PostgreSQL process SIGKILLed at once. */
  killNode(n: Node): number[] {
    const pids = [n.keeper.pid!, ...descendants(n.keeper.pid!)];
    try {
      const pm = Number(fs.readFileSync(path.join(n.pgdata, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pm) pids.push(pm, ...descendants(pm));
    } catch {
      /* no postmaster */
    }
    for (const p of new Set(pids)) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    return pids;
  }

  async down(): Promise<void> {
    for (const b of this.bouncers) b.stop();
    for (const n of this.nodes) this.killNode(n);
    const m = this.monitor?.pid;
    if (m)
      for (const p of [m, ...descendants(m)]) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          /* gone */
        }
      }
    // Postmasters left orphaned by the keeper's death.
    for (const d of [path.join(this.dir, "monitor"), ...this.nodes.map((n) => n.pgdata)]) {
      try {
        const pm = Number(fs.readFileSync(path.join(d, "postmaster.pid"), "utf8").split("\n")[0]);
        if (pm) process.kill(pm, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
