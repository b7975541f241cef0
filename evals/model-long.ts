// `npm run evals -- --long [--model-runs n] [--seed s --path p]`: the model-based test of the stop evidence (docs/evidence.md) in
// its long mode — 10 000 random sequences (default) against a fresh database and the in-process
// barrier engine, I1–I7 after every one (test/support/model-harness.ts; `npm test` runs 300). On a
// failure fast-check prints the seed and the shrunk path; pass them back to replay exactly that case.
import fc from "fast-check";
import { freshDatabase } from "./support/database";

export async function runModelLong(o: { runs: number; seed?: number; path?: string; log: (l: string) => void }): Promise<number> {
  const db = await freshDatabase(o.log);
  process.env.DATABASE_URL = db.url;
  // Imported after DATABASE_URL points at the fresh database (the client reads it on first use).
  const { makeModelTeam, modelProperty } = await import("../test/support/model-harness");
  const { prisma } = await import("../lib/platform/db/prisma");
  const { closePool } = await import("../lib/platform/db/pool");
  const t0 = Date.now();
  let close: (() => Promise<void>) | null = null;
  try {
    const team = await makeModelTeam();
    close = team.close;
    let done = 0;
    const progress = setInterval(() => o.log(`model: ${done} of ${o.runs} sequences (${((Date.now() - t0) / 1000).toFixed(0)} s)`), 30_000);
    try {
      await fc.assert(
        modelProperty(team).afterEach(() => {
          done++;
        }),
        {
          numRuns: o.runs,
          ...(o.seed !== undefined ? { seed: o.seed } : {}),
          ...(o.path ? { path: o.path } : {}),
        },
      );
    } finally {
      clearInterval(progress);
    }
    console.log(`model-based test: I1–I7 held over ${o.runs} sequences (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    return 0;
  } catch (err) {
    console.error(`model-based test FAILED:\n${(err as Error).message}`);
    return 1;
  } finally {
    await close?.().catch(() => {});
    await prisma()
      .$disconnect()
      .catch(() => {});
    await closePool().catch(() => {});
    await db.drop().catch(() => {});
  }
}
