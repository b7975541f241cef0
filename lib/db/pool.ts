// A plain node-postgres pool for the few hot statements that must be one round trip
// (the gate function) and for LISTEN/NOTIFY. Everything else goes through Prisma in lib/dal.
import pg from "pg";
import { databaseUrl } from "./url";
import { setting } from "../config";

const globalForPool = globalThis as unknown as { quiescePool?: pg.Pool };

export function pool(): pg.Pool {
  if (!globalForPool.quiescePool) {
    globalForPool.quiescePool = new pg.Pool({ connectionString: databaseUrl(), max: setting("QUIESCE_DB_POOL") });
  }
  return globalForPool.quiescePool;
}

export async function closePool(): Promise<void> {
  await globalForPool.quiescePool?.end();
  globalForPool.quiescePool = undefined;
}
