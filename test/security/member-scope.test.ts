// Trust inside a team: a team admin's people changes stay inside that team
// (docs/security/authorization.md#people-administration). Disabling a *membership* takes the user out of that team
// only — its console, their operator key's role there — and keeps their other teams; disabling a
// *user* everywhere needs admin of every team they belong to; every team keeps an active admin, checked
// per team, also when two admins race. Real PostgreSQL, the real session resolution, real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { resolveConsoleSession, type SessionTokenClaims } from "../../lib/modules/sessions/session";
import { listMembers, removeMember, setMemberRole, setMembershipDisabled, setUserDisabled } from "../../lib/modules/members/members";
import { ensureMembership } from "../../lib/modules/members/admin-directory";
import type { Principal } from "../../lib/platform/auth/principal";
import type { Role } from "../../lib/control/types";
import { makeKey, makeTeam, makeUser, type FixtureTeam } from "../support/fixtures";
import { startApiServer, type ApiServer } from "../support/api-server";

const SYSTEM: Principal = { type: "system", name: "member-scope-test" };
let api: ApiServer;
beforeAll(async () => {
  api = await startApiServer();
});
afterAll(async () => {
  await api?.close();
});

async function join(team: FixtureTeam, userId: string, role: Role): Promise<void> {
  await prisma().membership.create({ data: { id: newId("mem"), teamId: team.teamId, userId, role } });
}

async function asAdmin(team: FixtureTeam, user: { userId: string; email: string }): Promise<Principal> {
  return { type: "user", userId: user.userId, email: user.email, teamId: team.teamId, role: "admin" };
}

/** A fresh session token of the user, as sign-in would issue it now. */
async function claims(userId: string): Promise<SessionTokenClaims> {
  const u = await prisma().user.findUniqueOrThrow({ where: { id: userId } });
  return { sub: userId, sv: u.sessionVersion, authAt: Math.floor(Date.now() / 1000) };
}

async function sessionTeams(c: SessionTokenClaims, wanted?: string): Promise<{ kind: string; team?: string; teams: string[] }> {
  const s = await resolveConsoleSession(c, wanted);
  return s.kind === "ok"
    ? { kind: s.kind, team: s.session.team.slug, teams: s.session.teams.map((t) => t.slug) }
    : { kind: s.kind, teams: [] };
}

const runsWith = async (secret: string) =>
  (await fetch(`${api.url}/api/v1/runs`, { headers: { authorization: `Bearer ${secret}` } })).status;
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: { code?: string }) => e.code ?? String(e),
  );

/** Team A (admin a) and team B where x is the only admin; x is also a viewer of A. */
async function world() {
  const A = await makeTeam("A");
  const B = await makeTeam("B");
  const a = await makeUser(A.teamId, "admin");
  const x = await makeUser(B.teamId, "admin");
  await join(A, x.userId, "operator");
  return { A, B, a, x };
}

describe("a team admin disables a membership, not the user", () => {
  test("an admin of A cannot disable a user who also belongs to B, where that user is the only admin", async () => {
    const { A, B, a, x } = await world();
    const before = await claims(x.userId);
    expect(await codeOf(setUserDisabled(await asAdmin(A, a), { userId: x.userId, disabled: true }))).toBe("forbidden");
    expect((await prisma().user.findUniqueOrThrow({ where: { id: x.userId } })).disabledAt).toBeNull();
    // Nothing changed: the user's session still works, in both teams.
    expect(await sessionTeams(before, B.slug)).toEqual({ kind: "ok", team: B.slug, teams: [B.slug, A.slug] });
    expect(await prisma().auditEvent.count({ where: { target: x.userId, action: "user.disable" } })).toBe(0);
  });

  test("disabling the membership in A ends A only: sessions, console teams and the operator key's role there", async () => {
    const { A, B, a, x } = await world();
    const keyA = await makeKey(A.teamId, { kind: "operator", userId: x.userId });
    const keyB = await makeKey(B.teamId, { kind: "operator", userId: x.userId });
    expect([await runsWith(keyA.secret), await runsWith(keyB.secret)]).toEqual([200, 200]);
    const before = await claims(x.userId);
    expect((await sessionTeams(before, A.slug)).team).toBe(A.slug);

    await setMembershipDisabled(await asAdmin(A, a), { teamId: A.teamId, userId: x.userId, disabled: true });

    // The session of the moment ends (as removal does); signing in again reaches B, never A.
    expect((await sessionTeams(before, A.slug)).kind).toBe("signed_out");
    expect(await sessionTeams(await claims(x.userId), A.slug)).toEqual({ kind: "ok", team: B.slug, teams: [B.slug] });
    expect([await runsWith(keyA.secret), await runsWith(keyB.secret)]).toEqual([403, 200]);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: x.userId } })).disabledAt).toBeNull();
    // A still lists them, disabled here; B keeps its admin.
    const inA = (await listMembers(SYSTEM, A.teamId)).find((m) => m.userId === x.userId)!;
    expect(inA).toMatchObject({ role: "operator", disabled: true, userDisabled: false });
    expect((await listMembers(SYSTEM, B.teamId)).find((m) => m.userId === x.userId)).toMatchObject({ role: "admin", disabled: false });
    // Neither a role change nor the seed's ensureMembership nor a raw INSERT brings the membership back.
    expect(await codeOf(setMemberRole(await asAdmin(A, a), { teamId: A.teamId, userId: x.userId, role: "admin" }))).toBe("conflict");
    expect(await ensureMembership(SYSTEM, { teamId: A.teamId, userId: x.userId, role: "admin" })).toEqual({
      role: "operator",
      created: false,
    });
    await expect(join(A, x.userId, "admin")).rejects.toThrow();
    expect(await runsWith(keyA.secret)).toBe(403);

    // Enabling gives back the same role, and A's admin of B's user cannot touch B.
    await setMembershipDisabled(await asAdmin(A, a), { teamId: A.teamId, userId: x.userId, disabled: false });
    expect(await runsWith(keyA.secret)).toBe(200);
    expect((await sessionTeams(await claims(x.userId), A.slug)).team).toBe(A.slug);
    expect(await codeOf(setMembershipDisabled(await asAdmin(A, a), { teamId: B.teamId, userId: x.userId, disabled: true }))).toBe(
      "not_found",
    );

    const audit = await prisma().auditEvent.findMany({
      where: { target: x.userId, action: { startsWith: "member." } },
      orderBy: { id: "asc" },
    });
    expect(audit.map((e) => [e.teamId, e.action, e.actor])).toEqual([
      [A.teamId, "member.disable", `user:${a.userId}`],
      [A.teamId, "member.enable", `user:${a.userId}`],
    ]);
  });

  test("a user of another team is not found, and an operator may not disable anyone", async () => {
    const { A, B, a, x } = await world();
    const stranger = await makeUser(B.teamId, "viewer");
    expect(await codeOf(setUserDisabled(await asAdmin(A, a), { userId: stranger.userId, disabled: true }))).toBe("not_found");
    const op: Principal = { type: "user", userId: x.userId, email: x.email, teamId: A.teamId, role: "operator" };
    expect(await codeOf(setMembershipDisabled(op, { teamId: A.teamId, userId: a.userId, disabled: true }))).toBe("forbidden");
  });
});

describe("disabling a user everywhere", () => {
  test("an admin of every team of the user may; it is audited in each team and ends every session", async () => {
    const { A, B, a, x } = await world();
    const target = await makeUser(A.teamId, "viewer");
    await join(B, target.userId, "operator");
    await join(B, a.userId, "admin");
    const before = await claims(target.userId);
    await setUserDisabled(await asAdmin(A, a), { userId: target.userId, disabled: true });
    expect((await sessionTeams(before)).kind).toBe("signed_out");
    expect((await sessionTeams(await claims(target.userId))).kind).toBe("signed_out");
    const audit = await prisma().auditEvent.findMany({ where: { target: target.userId, action: "user.disable" } });
    expect(audit.map((e) => e.teamId).sort()).toEqual([A.teamId, B.teamId].sort());
    // Demoted in B, a is no longer an admin of every team of the user: enabling is refused too.
    await setMemberRole(SYSTEM, { teamId: B.teamId, userId: a.userId, role: "manager" });
    expect(await codeOf(setUserDisabled(await asAdmin(A, a), { userId: target.userId, disabled: false }))).toBe("forbidden");
    expect(await codeOf(setUserDisabled(await asAdmin(B, x), { userId: target.userId, disabled: false }))).toBe("forbidden");
    await setUserDisabled(SYSTEM, { userId: target.userId, disabled: false });
    expect((await sessionTeams(await claims(target.userId))).kind).toBe("ok");
  });

  test("no team is left without an active admin, checked team by team", async () => {
    const { A, B, x } = await world();
    // x is the only admin of B: the CLI (system) cannot disable them everywhere nor their membership in B.
    expect(await codeOf(setUserDisabled(SYSTEM, { userId: x.userId, disabled: true }))).toBe("conflict");
    expect(await codeOf(setMembershipDisabled(SYSTEM, { teamId: B.teamId, userId: x.userId, disabled: true }))).toBe("conflict");
    // …but the membership in A, where they are an operator, is fine.
    expect(await codeOf(setMembershipDisabled(SYSTEM, { teamId: A.teamId, userId: x.userId, disabled: true }))).toBe("ok");

    // A disabled user is no active admin: with a second admin disabled, x is still B's last one.
    const w = await makeUser(B.teamId, "admin");
    await setUserDisabled(SYSTEM, { userId: w.userId, disabled: true });
    expect(await codeOf(setMembershipDisabled(SYSTEM, { teamId: B.teamId, userId: x.userId, disabled: true }))).toBe("conflict");
    expect(await codeOf(setMemberRole(SYSTEM, { teamId: B.teamId, userId: x.userId, role: "viewer" }))).toBe("conflict");
    expect(await codeOf(removeMember(SYSTEM, { teamId: B.teamId, userId: x.userId }))).toBe("conflict");
    // A disabled admin membership does not count either.
    await setUserDisabled(SYSTEM, { userId: w.userId, disabled: false });
    await setMembershipDisabled(SYSTEM, { teamId: B.teamId, userId: w.userId, disabled: true });
    expect(await codeOf(setMembershipDisabled(SYSTEM, { teamId: B.teamId, userId: x.userId, disabled: true }))).toBe("conflict");
    expect(await activeAdmins(B)).toEqual([x.userId]);
  });

  test("an admin cannot disable themself, here or everywhere", async () => {
    const { A, a } = await world();
    await makeUser(A.teamId, "admin");
    expect(await codeOf(setMembershipDisabled(await asAdmin(A, a), { teamId: A.teamId, userId: a.userId, disabled: true }))).toBe(
      "conflict",
    );
    expect(await codeOf(setUserDisabled(await asAdmin(A, a), { userId: a.userId, disabled: true }))).toBe("conflict");
  });
});

async function activeAdmins(team: FixtureTeam): Promise<string[]> {
  const rows = await prisma().$queryRawUnsafe<{ user_id: string }[]>(
    `SELECT m.user_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 AND m.role = 'admin' AND u.disabled_at IS NULL`,
    team.teamId,
  );
  return rows.map((r) => r.user_id);
}

describe("two admins race to take each other out", () => {
  test("of two admins disabling each other's membership at once, the team always keeps exactly one active admin", async () => {
    const T = await makeTeam("race");
    const p = await makeUser(T.teamId, "admin");
    const q = await makeUser(T.teamId, "admin");
    for (let round = 0; round < 12; round++) {
      const results = await Promise.all([
        codeOf(setMembershipDisabled(await asAdmin(T, p), { teamId: T.teamId, userId: q.userId, disabled: true })),
        codeOf(setMembershipDisabled(await asAdmin(T, q), { teamId: T.teamId, userId: p.userId, disabled: true })),
        // A third path to the same end: the CLI disabling p everywhere.
        codeOf(setUserDisabled(SYSTEM, { userId: p.userId, disabled: true })),
      ]);
      expect(results.filter((r) => r === "ok").length, `round ${round}: ${results.join(", ")}`).toBeGreaterThanOrEqual(1);
      expect(
        results.every((r) => r === "ok" || r === "conflict" || r === "forbidden"),
        results.join(", "),
      ).toBe(true);
      expect((await activeAdmins(T)).length, `round ${round}: ${results.join(", ")}`).toBe(1);
      await setUserDisabled(SYSTEM, { userId: p.userId, disabled: false });
      for (const u of [p, q]) await setMembershipDisabled(SYSTEM, { teamId: T.teamId, userId: u.userId, disabled: false });
    }
  });
});
