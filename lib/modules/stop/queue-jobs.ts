// Called by the barrier after a kill commits (docs/architecture.md#the-cancellation-barrier "queued work is cancelled"): the
// operations are already `cancelled_not_started` in Quiesce (the durable record, with their ids);
// this removes the jobs from the queues that hold them, so a queue does not even deliver them.
// It is a second line: a job the queue still delivers is denied at admission by the worker guard.
//   pg-boss: boss.cancel(queue, ids) → state "cancelled" (the row stays in pgboss.job)
//   BullMQ:  waiting / delayed / prioritized jobs are removed (BullMQ has no cancelled state);
//            an active job cannot be removed — its abort token stops the handler instead.
// Never throws: every queue gets a line in the report, and each queue system has its own deadline.
import "server-only";
import PgBoss from "pg-boss";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { databaseUrl } from "../../platform/db/url";
import { sql, type Sql } from "../../platform/db/sql";
import { BULLMQ_PREFIX, PGBOSS_PREFIX, PGBOSS_SCHEMA, redisUrl } from "../../agent/queues/names";

export interface QueueJobRef {
  providerName: string;
  providerJobId: string;
}
/** One line per queue: how many jobs were asked for and what happened to them. */
export interface CancelResult {
  providerName: string;
  requested: number;
  /** Cancelled (pg-boss) or removed (BullMQ) before they started. */
  cancelled: number;
  /** BullMQ only: running jobs (their abort tokens stop them) and jobs already gone or finished. */
  active?: number;
  notFound?: number;
  finished?: number;
  error?: string;
}

export interface CancelOptions {
  timeoutMs?: number;
  connectionString?: string;
  redisUrl?: string;
}

/** SQL: the provider-name column names a queue this module handles (the SQL twin of isQueueProvider). */
export function isQueueProviderSql(column: Sql): Sql {
  return sql`(${column} LIKE ${`${PGBOSS_PREFIX}%`} OR ${column} LIKE ${`${BULLMQ_PREFIX}%`})`;
}

/** True for provider names this module handles (the barrier skips the others). */
export function isQueueProvider(name: string | null | undefined): boolean {
  return !!name && (name.startsWith(PGBOSS_PREFIX) || name.startsWith(BULLMQ_PREFIX));
}

export async function cancelQueueJobs(ops: QueueJobRef[], o: CancelOptions = {}): Promise<CancelResult[]> {
  const byQueue = new Map<string, string[]>();
  const out: CancelResult[] = [];
  for (const op of ops) {
    if (!isQueueProvider(op.providerName) || !op.providerJobId) continue;
    const list = byQueue.get(op.providerName) ?? [];
    list.push(op.providerJobId);
    byQueue.set(op.providerName, list);
  }
  const pg = [...byQueue].filter(([n]) => n.startsWith(PGBOSS_PREFIX));
  const bull = [...byQueue].filter(([n]) => n.startsWith(BULLMQ_PREFIX));
  const timeoutMs = o.timeoutMs ?? 5000;
  const [a, b] = await Promise.all([
    pg.length ? withDeadline(cancelPgBoss(pg, o), timeoutMs, pg) : [],
    bull.length ? withDeadline(cancelBullMQ(bull, o), timeoutMs, bull) : [],
  ]);
  return [...out, ...a, ...b];
}

const CHUNK = 1000;

/**
 * One client for all of a queue system's groups: opens it, cancels each group on it (a group's own error
 * is kept on its result), and closes it. A client that cannot open fails every group it did not reach.
 */
async function onOneClient<C>(
  groups: [string, string[]][],
  open: () => Promise<C>,
  close: (c: C) => Promise<void>,
  cancel: (c: C, r: CancelResult, ids: string[]) => Promise<void>,
  counters: Partial<CancelResult> = {},
): Promise<CancelResult[]> {
  const out: CancelResult[] = [];
  let client: C | undefined;
  try {
    client = await open();
    for (const [providerName, ids] of groups) {
      const r: CancelResult = { providerName, requested: ids.length, cancelled: 0, ...counters };
      try {
        await cancel(client, r, ids);
      } catch (err) {
        r.error = (err as Error).message;
      }
      out.push(r);
    }
  } catch (err) {
    for (const [providerName, ids] of groups)
      if (!out.some((r) => r.providerName === providerName))
        out.push({ providerName, requested: ids.length, cancelled: 0, error: (err as Error).message });
  } finally {
    if (client !== undefined) await close(client).catch(() => {});
  }
  return out;
}

function cancelPgBoss(groups: [string, string[]][], o: CancelOptions): Promise<CancelResult[]> {
  return onOneClient(
    groups,
    async () => {
      // migrate:false — cancelling must never create or upgrade pg-boss's schema.
      const boss = new PgBoss({
        connectionString: o.connectionString ?? databaseUrl(),
        schema: PGBOSS_SCHEMA,
        max: 2,
        supervise: false,
        schedule: false,
        migrate: false,
      });
      boss.on("error", () => {});
      await boss.start().catch(async (err: unknown) => {
        await boss.stop({ graceful: false, close: true, wait: true }).catch(() => {});
        throw err;
      });
      return boss;
    },
    (boss) => boss.stop({ graceful: false, close: true, wait: true }),
    async (boss, r, ids) => {
      const queue = r.providerName.slice(PGBOSS_PREFIX.length);
      // One statement per chunk: a large tree can hold thousands of queued jobs.
      for (let i = 0; i < ids.length; i += CHUNK) {
        const res = (await boss.cancel(queue, ids.slice(i, i + CHUNK))) as unknown as { affected?: number } | undefined;
        r.cancelled += res?.affected ?? 0;
      }
    },
  );
}

function cancelBullMQ(groups: [string, string[]][], o: CancelOptions): Promise<CancelResult[]> {
  return onOneClient(
    groups,
    async () => {
      const connection = new Redis(o.redisUrl ?? redisUrl(), {
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        retryStrategy: () => null,
        lazyConnect: true,
      });
      connection.on("error", () => {});
      await connection.connect().catch((err: unknown) => {
        connection.disconnect();
        throw err;
      });
      return connection;
    },
    async (connection) => connection.disconnect(),
    async (connection, r, ids) => {
      const queue = new Queue(r.providerName.slice(BULLMQ_PREFIX.length), { connection });
      try {
        for (const id of ids) {
          const job = await queue.getJob(id);
          if (!job) {
            r.notFound!++;
            continue;
          }
          const state = await job.getState();
          if (state === "active") {
            r.active!++;
            continue;
          }
          if (state === "completed" || state === "failed") {
            r.finished!++;
            continue;
          }
          // remove() refuses a job that became active meanwhile; its abort token covers it.
          try {
            await job.remove();
            r.cancelled++;
          } catch {
            r.active!++;
          }
        }
      } finally {
        await queue.close().catch(() => {});
      }
    },
    { active: 0, notFound: 0, finished: 0 },
  );
}

async function withDeadline(p: Promise<CancelResult[]>, ms: number, groups: [string, string[]][]): Promise<CancelResult[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CancelResult[]>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          groups.map(([providerName, ids]) => ({ providerName, requested: ids.length, cancelled: 0, error: `no answer within ${ms} ms` })),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
