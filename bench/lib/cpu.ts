// CPU time per call, which the machine's other load does not distort the way it does wall-clock figures:
// the database backends' (user + system time of every backend connected to the bench's database, from
// /proc — only when PostgreSQL runs on this host and /proc is readable) and this process's.
// Counted over a measure including its warm-up calls. Shared by the gate sections.
import pg from "pg";
import { cpuMsOf } from "./processes";
import { measure, pooled, type Stats } from "./measure";

export interface Cpu {
  serverUs: number;
  clientUs: number;
}

export interface CpuMeter {
  /** measure(), with the CPU per call of the measure remembered for `of`. */
  measure(...args: Parameters<typeof measure>): Promise<Stats>;
  /** Rounds pooled into one figure (measure.ts pooled), CPU per call weighted by each round's calls. */
  pooled(rounds: Stats[]): Stats;
  /** The CPU per call of a measure or pooled figure (undefined for one measured without the meter). */
  of(s: Stats): Cpu | undefined;
  /** Server + client CPU per call, µs (NaN where the server's could not be read). */
  total(s: Stats): number;
  end(): Promise<void>;
}

export async function cpuMeter(url: string): Promise<CpuMeter> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const cpu = new Map<Stats, Cpu>();
  /** Each backend's CPU so far (ms), by pid. */
  async function backends(): Promise<Map<number, number>> {
    const pids = (
      await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
    ).rows.map((r) => r.pid);
    return new Map(pids.map((pid) => [pid, cpuMsOf(pid)]));
  }
  /**
   * The backends' CPU between two readings: per backend that is there at the end, what it used since the
   * first reading (all of it if it started since). A backend that ended meanwhile is not counted; NaN as
   * soon as one backend's /proc entry cannot be read (PostgreSQL elsewhere): no partial sums.
   */
  function used(before: Map<number, number>, after: Map<number, number>): number {
    let sum = 0;
    for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
    return sum;
  }
  return {
    async measure(...args) {
      const [, ops, iterations, warmup] = args;
      const calls = iterations + ops.length * Math.ceil(warmup / ops.length);
      const s0 = await backends();
      const c0 = process.cpuUsage();
      const stats = await measure(...args);
      const c = process.cpuUsage(c0);
      cpu.set(stats, { serverUs: (used(s0, await backends()) / calls) * 1000, clientUs: (c.user + c.system) / calls });
      return stats;
    },
    pooled(rounds) {
      if (rounds.length === 1) return rounds[0]!;
      const out = pooled(rounds);
      const calls = rounds.reduce((s, r) => s + r.count, 0);
      const weighted = (f: (c: Cpu) => number) => rounds.reduce((s, r) => s + f(cpu.get(r)!) * r.count, 0) / calls;
      cpu.set(out, { serverUs: weighted((c) => c.serverUs), clientUs: weighted((c) => c.clientUs) });
      return out;
    },
    of: (s) => cpu.get(s),
    total: (s) => (cpu.get(s)?.serverUs ?? NaN) + (cpu.get(s)?.clientUs ?? NaN),
    end: () => admin.end(),
  };
}
