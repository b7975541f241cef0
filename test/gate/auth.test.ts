// The gate authenticates inside its SQL function; this proves its key rules mirror
// lib/control/authz.ts isAllowed(caller, "gate.ask") for every kind × role × scope combination,
// and that an operator key follows its user's CURRENT role (and membership: a disabled one is none).
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { ACTIONS, isAllowed } from "../../lib/control/authz";
import { KEY_KINDS, ROLES, type Role } from "../../lib/control/types";
import { gateCheck } from "../../lib/modules/gate/statement";
import { makeKey, makeRun, makeTeam, makeUser, opKey } from "../support/fixtures";
import { setMembershipDisabled } from "../../lib/modules/members/members";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

// Derived from the action registry: no scopes, the wildcard, each action alone, and every action but
// the gate's, so a new action is covered without editing this list.
const SCOPE_SETS: string[][] = [[], ["*"], ...ACTIONS.map((a) => [a]), ACTIONS.filter((a) => a !== "gate.ask")];

test("every kind × role × scopes combination: the SQL gate agrees with isAllowed(gate.ask)", async () => {
  const team = await makeTeam();
  const run = await makeRun(team.teamId);
  const users = new Map<Role, string>();
  for (const role of ROLES) users.set(role, (await makeUser(team.teamId, role)).userId);
  let checked = 0;
  for (const kind of KEY_KINDS) {
    const roles: (Role | null)[] = kind === "operator" ? [...ROLES, null] : [null];
    for (const role of roles) {
      for (const scopes of SCOPE_SETS) {
        // role null for an operator key = a user without a membership in this team
        const userId = kind !== "operator" ? null : role ? users.get(role)! : (await makeUser((await makeTeam()).teamId, "admin")).userId;
        const key = await makeKey(team.teamId, { kind, scopes, userId });
        const expected = isAllowed({ type: "key", kind, role, scopes }, "gate.ask");
        const o = await gateCheck({ keyHash: key.hash, runId: run.runId, leaseId: run.leaseId, epoch: 1, operationId: opKey(), tool: "t" });
        expect({ kind, role, scopes, allowed: o.ok }).toEqual({ kind, role, scopes, allowed: expected });
        if (!o.ok) expect(o.code).toBe("forbidden");
        checked++;
      }
    }
  }
  const machineKinds = KEY_KINDS.filter((k) => k !== "operator").length;
  expect(checked).toBe((machineKinds + ROLES.length + 1) * SCOPE_SETS.length);
});

test("an operator key carries its user's current role: demoting the user disarms the key at once", async () => {
  const team = await makeTeam();
  const run = await makeRun(team.teamId);
  const { userId } = await makeUser(team.teamId, "admin");
  const key = await makeKey(team.teamId, { kind: "operator", userId });
  const ask = () => gateCheck({ keyHash: key.hash, runId: run.runId, leaseId: run.leaseId, epoch: 1, operationId: opKey(), tool: "t" });
  expect(await ask()).toMatchObject({ ok: true, decision: "allow" });
  await prisma().membership.updateMany({ where: { teamId: team.teamId, userId }, data: { role: "operator" } });
  expect(await ask()).toMatchObject({ ok: false, code: "forbidden" });
});

test("an admin's operator key stops at the gate when their membership in the key's team is disabled, and not in another team", async () => {
  const team = await makeTeam();
  const other = await makeTeam();
  const run = await makeRun(team.teamId);
  const otherRun = await makeRun(other.teamId);
  const { userId } = await makeUser(team.teamId, "admin");
  await makeUser(team.teamId, "admin"); // the team keeps an active admin
  await prisma().membership.create({ data: { id: `mem_${opKey("gate")}`, teamId: other.teamId, userId, role: "admin" } });
  const key = await makeKey(team.teamId, { kind: "operator", userId });
  const otherKey = await makeKey(other.teamId, { kind: "operator", userId });
  const ask = (k: { hash: string }, r: { runId: string; leaseId: string }) =>
    gateCheck({ keyHash: k.hash, runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: opKey(), tool: "t" });
  expect(await ask(key, run)).toMatchObject({ ok: true, decision: "allow" });
  await setMembershipDisabled({ type: "system", name: "gate-test" }, { teamId: team.teamId, userId, disabled: true });
  expect(await ask(key, run)).toMatchObject({ ok: false, code: "forbidden" });
  expect(await ask(otherKey, otherRun)).toMatchObject({ ok: true, decision: "allow" });
  await setMembershipDisabled({ type: "system", name: "gate-test" }, { teamId: team.teamId, userId, disabled: false });
  expect(await ask(key, run)).toMatchObject({ ok: true, decision: "allow" });
});
