// One transaction on a pooled node-postgres connection, for the control writes whose latency is the
// product — the kill's dispatch stop (lib/modules/stop/kill.ts): a statement here costs a fraction of one in an
// interactive Prisma transaction (docs/design/raw-pool-transactions.md).
// Same pool, same timeouts (statement, lock, acquire) as everything else (lib/platform/db/pool.ts).
import type pg from "pg";
import { pool } from "./pool";

/** One statement in the transaction; rows as node-postgres returns them (bigint as string, json parsed). */
export type PgQuery = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

export interface PgTransactionOptions {
  /**
   * The opening, sent as one simple-protocol round trip: e.g. `BEGIN; SELECT pg_advisory_xact_lock(…)`
   * with its arguments escaped by `client.escapeLiteral`. Default `BEGIN`. The rows of its last
   * statement are handed to the body.
   */
  begin?: (client: pg.PoolClient) => string;
}

export async function withPgTransaction<T>(
  fn: (q: PgQuery, opened: Record<string, unknown>[]) => Promise<T>,
  opts: PgTransactionOptions = {},
): Promise<T> {
  return pooledTransaction(
    (client) => (opts.begin ? opts.begin(client) : "BEGIN"),
    (client, opened) => fn(async (sql, params) => (await client.query(sql, params)).rows, opened),
  );
}

/**
 * The transaction both raw-pool helpers run (this one and `transaction` in ./sql.ts): `opening` (BEGIN
 * and what rides with it) in one round trip, `fn` with the rows of its last statement, then COMMIT; on
 * a throw ROLLBACK, and a connection whose ROLLBACK failed is destroyed instead of returned to the pool.
 */
export async function pooledTransaction<T>(
  opening: (client: pg.PoolClient) => string,
  fn: (client: pg.PoolClient, opened: Record<string, unknown>[]) => Promise<T>,
): Promise<T> {
  const client = await pool().connect();
  let broken: Error | undefined;
  try {
    // A multi-statement simple query answers one result per statement.
    const res = (await client.query(opening(client))) as unknown as pg.QueryResult | pg.QueryResult[];
    const last = Array.isArray(res) ? res[res.length - 1] : res;
    const result = await fn(client, last?.rows ?? []);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch((e: Error) => {
      broken = e; // the connection is unusable: destroy it instead of returning it to the pool
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
