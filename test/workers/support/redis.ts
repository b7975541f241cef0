// The real Redis for the BullMQ tests (REDIS_URL, default 127.0.0.1:6379). Without it the BullMQ
// tests are skipped locally, but with CI set a missing Redis FAILS the run: CI must not go green on
// tests it never ran.
import { Redis } from "ioredis";
import { redisUrl } from "../../../lib/agent/queues/bullmq";

export async function redisAvailable(url = redisUrl()): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on("error", () => {});
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

export async function requireRedis(): Promise<boolean> {
  const ok = await redisAvailable();
  if (!ok && process.env.CI)
    throw new Error(
      `Redis is not reachable at ${redisUrl()} and CI is set: the BullMQ tests must run in CI (start redis-server or set REDIS_URL)`,
    );
  if (!ok) console.warn(`[bullmq tests] skipped: no Redis at ${redisUrl()} (set REDIS_URL; with CI set this fails instead)`);
  return ok;
}
