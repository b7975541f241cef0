// One PrismaClient per process, on the node-postgres driver adapter (Prisma 7).
// Import only from lib/modules/** and the gate (docs/architecture.md#conventions).
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client";
import { databaseUrl } from "./url";
import { connectionTimeouts } from "./pool";
import { newPool } from "./hosts";
import { setting } from "../config";

const globalForPrisma = globalThis as unknown as { quiescePrisma?: PrismaClient };

export function prisma(): PrismaClient {
  if (!globalForPrisma.quiescePrisma) {
    // Statement, lock and pool-acquire timeouts on every connection (lib/platform/db/pool.ts); a multi-host
    // connection string connects to the primary only (lib/platform/db/hosts.ts).
    const adapter = new PrismaPg(newPool(databaseUrl(), { max: setting("QUIESCE_DB_POOL"), ...connectionTimeouts() }));
    globalForPrisma.quiescePrisma = new PrismaClient({ adapter });
  }
  return globalForPrisma.quiescePrisma;
}

export type { PrismaClient };
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];
