// Fleet fan-out under a saturated database (docs/fleet-stop.md#kill-the-fan-out-and-the-fleet-receipt):
// a target whose kill times out waiting for a lock is not a failed target — it stays pending and the
// next fan-out starts it, so the fleet receipt is not made stop_incomplete by load. Real PostgreSQL: the
// tree lock is held from another session, and the kill hits this process's lock timeout.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { advancePendingStops, createStop, getStop } from "../../lib/modules/stop/stops";
import { makeRun } from "../support/fixtures";
import { makeTeam, type TeamFixture } from "../barrier/fixtures";

const system = { type: "system", name: "test" } as const;
let team: TeamFixture;
const savedLockTimeout = process.env.QUIESCE_DB_LOCK_TIMEOUT_MS;

beforeAll(async () => {
  // Read when this process's connections are opened: a short lock wait, so the test does not wait 5 s.
  process.env.QUIESCE_DB_LOCK_TIMEOUT_MS = "300";
  team = await makeTeam();
}, 60_000);

afterAll(async () => {
  if (savedLockTimeout === undefined) delete process.env.QUIESCE_DB_LOCK_TIMEOUT_MS;
  else process.env.QUIESCE_DB_LOCK_TIMEOUT_MS = savedLockTimeout;
  await prisma().$disconnect();
  await closePool();
});

describe("fleet fan-out", () => {
  test("a kill that times out on a lock leaves its target pending (not failed); the next fan-out starts it", async () => {
    const blocked = await makeRun(team.teamId);
    const free = await makeRun(team.teamId);
    const stop = await createStop(team.users.operator.principal, {
      action: "kill",
      filter: { runIds: [blocked.runId, free.runId] },
      reason: "fan-out under load",
      dryRun: false,
    });
    expect(stop.barriers.total).toBe(2);

    // Another session holds the blocked tree's lock (as a long transaction on that tree would).
    const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [blocked.rootRunId]);
      expect(await advancePendingStops(system, team.teamId)).toBe(1);
      const during = await getStop(team.users.operator.principal, stop.stopId);
      const entry = (runId: string) => during.runs.find((r) => r.runId === runId)!;
      expect(entry(free.runId).barrierId).not.toBeNull();
      expect(entry(blocked.runId)).toMatchObject({ barrierId: null, error: null });
      expect(during.barriers).toMatchObject({ total: 2, started: 1, failed: 0 });
      expect(during.receipt).toBeNull();
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }

    expect(await advancePendingStops(system, team.teamId)).toBe(1);
    const after = await getStop(team.users.operator.principal, stop.stopId);
    expect(after.barriers).toMatchObject({ total: 2, started: 2, failed: 0 });
    expect((await prisma().run.findUniqueOrThrow({ where: { id: blocked.runId } })).lifecycle).toBe("killed");
  }, 60_000);
});
