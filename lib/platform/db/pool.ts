// A plain node-postgres pool for the few hot statements that must be one round trip
// (the gate function) and for LISTEN/NOTIFY. Everything else goes through Prisma in lib/modules.
// Every connection carries a statement timeout, a lock timeout and a pool-acquire timeout, so a slow
// database fails requests in bounded time instead of stalling everything.
import type pg from "pg";
import { databaseUrl } from "./url";
import { newPool } from "./hosts";
import { setting } from "../config";

const globalForPool = globalThis as unknown as { quiescePool?: pg.Pool; quiesceGatePool?: pg.Pool };

/** Timeouts for every pooled connection (also used by the Prisma adapter). */
export function connectionTimeouts(
  budgetMs?: number,
): Pick<pg.PoolConfig, "statement_timeout" | "lock_timeout" | "connectionTimeoutMillis" | "idle_in_transaction_session_timeout"> {
  const statement = setting("QUIESCE_DB_STATEMENT_TIMEOUT_MS");
  return {
    statement_timeout: budgetMs ?? statement,
    lock_timeout: budgetMs ?? setting("QUIESCE_DB_LOCK_TIMEOUT_MS"),
    connectionTimeoutMillis: budgetMs ?? setting("QUIESCE_DB_ACQUIRE_TIMEOUT_MS"),
    idle_in_transaction_session_timeout: Math.max(60_000, statement * 2),
  };
}

export function pool(): pg.Pool {
  if (!globalForPool.quiescePool) {
    globalForPool.quiescePool = newPool(databaseUrl(), { max: setting("QUIESCE_DB_POOL"), ...connectionTimeouts() });
  }
  return globalForPool.quiescePool;
}

/**
 * The gate's own pool: its statement, lock and acquire timeouts are the gate's budget
 * (QUIESCE_GATE_DB_BUDGET_MS), so a slow database makes the gate answer deny control_unavailable in
 * time, and the server cancels (rolls back) the statement rather than commit a decision nobody heard.
 */
export function gatePool(): pg.Pool {
  if (!globalForPool.quiesceGatePool) {
    const budget = setting("QUIESCE_GATE_DB_BUDGET_MS");
    globalForPool.quiesceGatePool = newPool(databaseUrl(), {
      max: setting("QUIESCE_DB_POOL"),
      ...connectionTimeouts(budget),
      query_timeout: budget + 500,
    });
  }
  return globalForPool.quiesceGatePool;
}

export async function closePool(): Promise<void> {
  await globalForPool.quiescePool?.end();
  globalForPool.quiescePool = undefined;
  await globalForPool.quiesceGatePool?.end();
  globalForPool.quiesceGatePool = undefined;
}

/**
 * `{ name }` for a hot statement on these pools: parsed once per connection, then only bound and
 * executed. Behind a transaction pooler (QUIESCE_DB_POOLER=transaction) the next transaction may run on
 * a server connection that never saw it, so there the statement is sent unnamed (docs/deploy.md#pgbouncer).
 */
export function preparedName(name: string): { name?: string } {
  return setting("QUIESCE_DB_POOLER") === "transaction" ? {} : { name };
}
