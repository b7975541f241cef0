// The reviewer's and manager's CLI as real processes: `reconcile list|assign|resolve` and `receipt`.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { addOp, makeTeam, makeTree, receiptsOf, spawnCli, waitFor, type TeamFixture } from "./fixtures";

let team: TeamFixture;
const ac = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  team = await makeTeam();
  engine = runBarrierWorker({ teamId: team.teamId, signal: ac.signal, pollMs: 300, localSettleMs: 300, listen: true });
});
afterAll(async () => {
  ac.abort();
  await engine;
  await prisma().$disconnect();
  await closePool();
});

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const p = spawnCli(args);
  const code = await new Promise<number>((res) => p.child.once("exit", (c) => res(c ?? -1)));
  return { code, out: p.output() };
}

test("reconcile list / assign / resolve and receipt, acting as named members with their current roles", async () => {
  const { root } = await makeTree(team.teamId, 0);
  await addOp(team.teamId, root, { state: "running", tool: "bash", operationId: "bash-rm-rf" });
  const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
  await waitFor("receipt v1", async () => (await receiptsOf(barrierId)).length === 1, 60_000, 100);
  const rec = await prisma().reconciliation.findFirstOrThrow({ where: { settlement: { barrierId } } });

  const list = await cli(["reconcile", "list", "--barrier", barrierId, "--json"]);
  expect(list.code, list.out).toBe(0);
  expect(JSON.parse(list.out.slice(list.out.indexOf("[")))).toEqual([
    expect.objectContaining({ id: rec.id, operationId: "bash-rm-rf", status: "assigned", cause: "cancel_unacknowledged" }),
  ]);

  // An operator may not assign: refused, exit 2, nothing changed.
  const refused = await cli(["reconcile", "assign", rec.id, "--to", team.users.viewer.email, "--as", team.users.operator.email]);
  expect(refused.code).toBe(2);
  expect(refused.out).toContain("forbidden");
  expect((await prisma().reconciliation.findUniqueOrThrow({ where: { id: rec.id } })).assigneeUserId).toBe(team.users.operator.id);
  // Bad input: exit 2 naming the flag.
  const bad = await cli(["reconcile", "resolve", rec.id, "--resolution", "maybe", "--evidence", "x", "--as", team.users.manager.email]);
  expect(bad.code).toBe(2);
  expect(bad.out).toContain("--resolution");

  const assigned = await cli(["reconcile", "assign", rec.id, "--to", team.users.viewer.email, "--as", team.users.manager.email]);
  expect(assigned.code, assigned.out).toBe(0);
  expect(assigned.out).toContain("receipt v2 issued");
  const resolved = await cli([
    "reconcile",
    "resolve",
    rec.id,
    "--resolution",
    "effect_present",
    "--evidence",
    "the file is gone: rm ran",
    "--as",
    team.users.viewer.email,
  ]);
  expect(resolved.code, resolved.out).toBe(0);
  expect(resolved.out).toContain("receipt v3 issued");

  const json = await cli(["receipt", barrierId, "--json"]);
  expect(json.code, json.out).toBe(0);
  const body = JSON.parse(json.out.slice(json.out.indexOf("{")));
  expect(body).toMatchObject({ version: 3, decision: "stopped_and_quiet", effects: { completed_and_verified: 1, unknown: 0 } });
  expect(body.reconciliation).toEqual([
    expect.objectContaining({ assignee: team.users.viewer.email, status: "resolved", resolution: "effect_present" }),
  ]);
  expect(body.effect_receipts).toEqual([expect.objectContaining({ operation_id: "bash-rm-rf", source: "reconciliation" })]);
  const summary = await cli(["receipt", barrierId, "--version", "2"]);
  expect(summary.code).toBe(0);
  expect(summary.out).toContain(`stop receipt ${barrierId} v2 (versions: 1, 2, 3): stop_incomplete`);
  expect(summary.out).toContain(`reconciliation: bash-rm-rf held by ${team.users.viewer.email} (assigned)`);
  expect((await cli(["receipt", "stop_nope"])).code).toBe(2);
}, 240_000);
