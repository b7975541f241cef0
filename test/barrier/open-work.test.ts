// Open work's filters are the module's queries: owner, age and overdue narrow the SQL, not a capped list,
// and the counts (navigation badge and page header) are the team's whatever the filters.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { listOpenWork } from "../../lib/modules/stop/console/reconciliations";
import { countOpenWork } from "../../lib/modules/stop/console/counts";
import { addOp, makeTeam, makeTree, type TeamFixture } from "./fixtures";

let team: TeamFixture;
let other: TeamFixture;
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/** An unknown outcome (the trigger opens its reconciliation), opened `age` ago, held by `owner`. */
async function unknown(t: TeamFixture, age: number, owner: string | null): Promise<string> {
  const { root } = await makeTree(t.teamId);
  const op = await addOp(t.teamId, root, { state: "running" });
  await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown" } });
  const r = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
  await prisma().reconciliation.update({
    where: { id: r.id },
    data: { createdAt: ago(age), assigneeUserId: owner, status: owner ? "assigned" : "awaiting_assignee" },
  });
  return r.id;
}

/** A recovery item (a barrier's settlement found the effect completed: the trigger opens it at commit). */
async function recovery(t: TeamFixture, age: number, owner: string, dueIn: number, state: "open" | "accepted" = "open"): Promise<string> {
  const { root } = await makeTree(t.teamId);
  const op = await addOp(t.teamId, root, { state: "succeeded" });
  const barrierId = newId("stop");
  await prisma().barrier.create({
    data: {
      id: barrierId,
      teamId: t.teamId,
      runId: root.runId,
      requestedBy: "system:test",
      reason: "test",
      newEpoch: 2,
      policy: {},
      phase: "complete",
    },
  });
  await prisma().settlement.create({
    data: {
      id: newId("set"),
      barrierId,
      operationId: op.rowId,
      stateAtBarrier: "running",
      settledState: "completed_and_verified",
      settledAt: new Date(),
    },
  });
  const r = await prisma().recoveryItem.findUniqueOrThrow({ where: { operationId: op.rowId } });
  await prisma().recoveryItem.update({
    where: { id: r.id },
    data: { createdAt: ago(age), assigneeUserId: owner, dueAt: new Date(Date.now() + dueIn), state },
  });
  return r.id;
}

const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();

let u: Record<string, string>;
beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
  const op = team.users.operator.id;
  const adm = team.users.admin.id;
  u = {
    freshMine: await unknown(team, 0, op),
    oldMine: await unknown(team, 2 * HOUR, op),
    oldNobody: await unknown(team, 30 * HOUR, null),
    recFresh: await recovery(team, 0, op, 24 * HOUR),
    recOverdue: await recovery(team, 30 * HOUR, op, -HOUR),
    recAdmin: await recovery(team, 2 * HOUR, adm, 24 * HOUR),
    recDone: await recovery(team, 30 * HOUR, op, -HOUR, "accepted"),
  };
  await unknown(other, 30 * HOUR, null);
  await recovery(other, 30 * HOUR, other.users.admin.id, -HOUR);
}, 60_000);

afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

describe("open work", () => {
  test("counts are the team's, whatever the filters: open unknowns, recovery items still owed, overdue, and who holds them", async () => {
    expect(await countOpenWork(team.users.manager.principal)).toEqual({
      unknowns: 3,
      recoveries: 3,
      overdue: 1,
      held: { unknowns: { mine: 0, nobody: 1 }, recoveries: { mine: 0, nobody: 0 } },
    });
    // "Mine" is the viewer's: the operator holds two of each.
    expect((await countOpenWork(team.users.operator.principal)).held).toEqual({
      unknowns: { mine: 2, nobody: 1 },
      recoveries: { mine: 2, nobody: 0 },
    });
  });

  test("owner: me, nobody, a member", async () => {
    const manager = team.users.manager.principal;
    const mine = await listOpenWork(team.users.operator.principal, { owner: "me" });
    expect(ids(mine.reconciliations)).toEqual([u.freshMine, u.oldMine].sort());
    expect(ids(mine.recoveries)).toEqual([u.recFresh, u.recOverdue].sort());
    const nobody = await listOpenWork(manager, { owner: "none" });
    expect(ids(nobody.reconciliations)).toEqual([u.oldNobody]);
    expect(nobody.recoveries).toEqual([]);
    const admin = await listOpenWork(manager, { owner: team.users.admin.id });
    expect(ids(admin.recoveries)).toEqual([u.recAdmin]);
    expect(admin.reconciliations).toEqual([]);
  });

  test("age: over 1 h, over 1 day, overdue (recovery items only: unknown outcomes have no due time)", async () => {
    const manager = team.users.manager.principal;
    const hour = await listOpenWork(manager, { age: "1h" });
    expect(ids(hour.reconciliations)).toEqual([u.oldMine, u.oldNobody].sort());
    expect(ids(hour.recoveries)).toEqual([u.recOverdue, u.recAdmin].sort());
    const day = await listOpenWork(manager, { age: "1d" });
    expect(ids(day.reconciliations)).toEqual([u.oldNobody]);
    expect(ids(day.recoveries)).toEqual([u.recOverdue]);
    const overdue = await listOpenWork(manager, { age: "overdue" });
    expect(overdue.reconciliations).toEqual([]);
    expect(overdue.recoveries.map((r) => [r.id, r.overdue])).toEqual([[u.recOverdue, true]]);
    // A final item past its due time is not overdue: nothing is owed.
    const all = await listOpenWork(manager, { age: "overdue", status: "all" });
    expect(ids(all.recoveries)).toEqual([u.recOverdue]);
    const resolved = await listOpenWork(manager, { status: "resolved", owner: "me" });
    expect(resolved.recoveries).toEqual([]);
    expect(ids((await listOpenWork(team.users.operator.principal, { status: "resolved", owner: "me" })).recoveries)).toEqual([u.recDone]);
  });

  test("another team's work is never listed or counted", async () => {
    const all = await listOpenWork(team.users.admin.principal, { status: "all" });
    expect(all.reconciliations).toHaveLength(3);
    expect(all.recoveries).toHaveLength(4);
    expect(await countOpenWork(other.users.viewer.principal)).toMatchObject({ unknowns: 1, recoveries: 1, overdue: 1 });
  });
});
