// Policy in the gate against the real database (docs/policies.md): deny rules, approvals bound to one call and
// voided by a stop, budgets reserved in the gate's statement (raced by concurrent callers), the holder rule for
// approvers, and bad input that changes nothing.
import { afterAll, describe, expect, test } from "vitest";
import pg from "pg";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { gateCheck, gateCheckBatch, type GateOutcome } from "../../lib/modules/gate/statement";
import {
  createPolicyVersion,
  dryRunPolicy,
  enablePolicy,
  getPolicy,
  getPolicyVersion,
  listBudgets,
  listPolicyVersions,
} from "../../lib/modules/policy";
import { decideApproval, getApproval, listApprovals, sweepApprovals } from "../../lib/modules/approvals";
import { pauseRun, resumeRun, completeOperation } from "../../lib/modules/runs";
import { killRun } from "../../lib/modules/stop/kill";
import { loadEvidenceFactsTx } from "../../lib/modules/stop/internal/evidence";
import { buildReceipt } from "../../lib/control/evidence/receipt";
import type { Principal } from "../../lib/platform/auth/principal";
import type { Role } from "../../lib/control/types";
import { makeChain, makeGateWorld, makeKey, makeUser, opKey, type FixtureKey, type FixtureRun } from "../support/fixtures";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

async function person(teamId: string, role: Role): Promise<Principal & { type: "user" }> {
  const u = await makeUser(teamId, role);
  return { type: "user", userId: u.userId, email: u.email, teamId, role };
}

async function world(rules: unknown[], redactKeys: string[] = []) {
  const w = await makeGateWorld(2);
  const admin = await person(w.team.teamId, "admin");
  const v = await createPolicyVersion(admin, { rules, redactKeys });
  await enablePolicy(admin, { version: v.version, reason: "test" });
  return { ...w, admin, root: w.chain[0]! };
}

function ask(
  key: FixtureKey,
  run: FixtureRun,
  over: { operationId?: string; tool?: string; arguments?: Record<string, unknown>; cost?: Record<string, number> } = {},
) {
  return gateCheck({
    keyHash: key.hash,
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: over.operationId ?? opKey(),
    tool: over.tool ?? "deployment.reserve_preview",
    ...(over.arguments ? { arguments: over.arguments } : {}),
    ...(over.cost ? { cost: over.cost } : {}),
  });
}

/** A new call of the run, as the gate's input (for batches). */
const call = (key: FixtureKey, run: FixtureRun) => ({
  keyHash: key.hash,
  runId: run.runId,
  leaseId: run.leaseId,
  epoch: run.epoch,
  operationId: opKey(),
  tool: "t",
});

function answer(o: GateOutcome) {
  if (!o.ok) throw new Error(`refused: ${o.code}`);
  return o;
}
const said = (o: GateOutcome) => {
  const a = answer(o);
  return `${a.decision} ${a.reason}`;
};

/** Every reservation the gate wrote for the team's calls: a list of rows on each operation's row. */
async function reservations(teamId: string) {
  return prisma().$queryRawUnsafe<
    {
      operationId: string;
      budget: string;
      scopeKey: string;
      amount: number;
      actual: number | null;
      state: string;
      releaseCause: string | null;
    }[]
  >(
    `SELECT o.operation_id AS "operationId", r.budget, r.scope_key AS "scopeKey", r.amount::float8 AS amount,
            r.actual::float8 AS actual, r.state, r.release_cause AS "releaseCause"
       FROM operations o CROSS JOIN LATERAL unnest(o.budget_reservations) WITH ORDINALITY AS r
      WHERE o.team_id = $1 ORDER BY o.created_at, o.id, r.ordinality`,
    teamId,
  );
}

const APPROVE = { name: "deploys-need-a-yes", tool: "deployment.*", effect: "require_approval", approval: { ttlSeconds: 600 } };

describe("rules", () => {
  test("a deny rule denies its tools only, the first matching rule wins, and a team without a policy is untouched", async () => {
    const { key, leaf } = await world([
      { name: "allow-preview", tool: "deployment.preview", effect: "allow" },
      { name: "no-deploys", tool: "deployment.*", effect: "deny" },
    ]);
    expect(said(await ask(key, leaf, { tool: "deployment.reserve_preview" }))).toBe("deny policy_denied");
    expect(said(await ask(key, leaf, { tool: "deployment.preview" }))).toBe("allow allowed");
    expect(said(await ask(key, leaf, { tool: "search.web" }))).toBe("allow allowed");
    const plain = await makeGateWorld(1);
    expect(said(await ask(plain.key, plain.leaf, { tool: "deployment.reserve_preview" }))).toBe("allow allowed");
  });

  test("the gate reads the version enabled at decision time; disabling the policy ends it", async () => {
    const { key, leaf, admin } = await world([{ name: "no-deploys", tool: "deployment.*", effect: "deny" }]);
    // one call and a batch alike (both read the version's rules from the team row)
    const both = async (tool: string) => {
      const one = said(await ask(key, leaf, { tool }));
      const batch = (await gateCheckBatch([call(key, leaf), call(key, leaf)].map((c) => ({ ...c, tool })))).map(said);
      expect(batch, tool).toEqual([one, one]);
      return one;
    };
    expect(await both("deployment.reserve_preview")).toBe("deny policy_denied");
    const v2 = await createPolicyVersion(admin, {
      rules: [
        { name: "z-calls", effect: "budget", budget: { unit: "calls", limit: 1000 } },
        { name: "no-search", tool: "search.*", effect: "deny" },
        { name: "a-calls", effect: "budget", budget: { unit: "calls", limit: 1000 } },
        { name: "allow-all", effect: "allow" },
      ],
    });
    expect(v2.diff).toMatchObject({ removed: ["no-deploys"] });
    expect(await both("deployment.reserve_preview")).toBe("deny policy_denied"); // saved, not enabled yet
    await enablePolicy(admin, { version: v2.version, reason: "swap" });
    expect(await both("deployment.reserve_preview")).toBe("allow allowed");
    expect(await both("search.web")).toBe("deny policy_denied");
    // The team row holds the enabled version's rules in the order the gate reads them: access rules by
    // position, then budgets by name. It can never hold a version without its rules.
    const row = async () =>
      (
        await prisma().$queryRawUnsafe<{ version: number | null; rules: string[] | null }[]>(
          `SELECT policy_version AS version, (SELECT array_agg(x.name ORDER BY x.ordinality) FROM unnest(policy_rules) WITH ORDINALITY AS x) AS rules
             FROM teams WHERE id = $1`,
          admin.teamId,
        )
      )[0];
    expect(await row()).toEqual({ version: v2.version, rules: ["no-search", "allow-all", "a-calls", "z-calls"] });
    await expect(prisma().$executeRawUnsafe("UPDATE teams SET policy_rules = NULL WHERE id = $1", admin.teamId)).rejects.toThrow(
      /teams_policy_rules_check/,
    );
    await enablePolicy(admin, { version: null, reason: "off" });
    expect(await row()).toEqual({ version: null, rules: null });
    expect(await both("search.web")).toBe("allow allowed");
    const audit = await prisma().auditEvent.findMany({ where: { teamId: admin.teamId, action: "policy.enable" }, orderBy: { id: "asc" } });
    expect(audit.map((a) => (a.after as { version: number | null }).version)).toEqual([1, 2, null]);
  });

  test("the newest versions read at once are each the version read alone, with its diff", async () => {
    const { admin } = await world([{ name: "a", effect: "deny", tool: "x" }]);
    await createPolicyVersion(admin, {
      rules: [
        { name: "a", effect: "deny", tool: "y" },
        { name: "b", effect: "allow" },
      ],
    });
    await createPolicyVersion(admin, { rules: [{ name: "b", effect: "allow" }], redactKeys: ["token"] });
    const all = await listPolicyVersions(admin, 2);
    expect(all.map((v) => v.version)).toEqual([3, 2]);
    for (const v of all) expect(v).toEqual(await getPolicyVersion(admin, v.version));
    expect(all[0]!.diff).toMatchObject({ against: 2, removed: ["a"], redactKeys: { added: ["token"] } });
  });

  test("bad input changes nothing: an unknown rule field, a budget of -1, a budget without its spec, twice the same name", async () => {
    const { admin } = await world([]);
    const bad = [
      { rules: [{ name: "x", effect: "deny", colour: "red" }] },
      { rules: [{ name: "b", effect: "budget", budget: { unit: "usd", limit: -1 } }] },
      { rules: [{ name: "b", effect: "budget" }] },
      {
        rules: [
          { name: "a", effect: "deny" },
          { name: "a", effect: "allow" },
        ],
      },
      { rules: [{ name: "a", effect: "require_approval", approval: { users: ["nobody@elsewhere.test"] } }] },
    ];
    for (const doc of bad) await expect(createPolicyVersion(admin, doc)).rejects.toMatchObject({ code: "bad_request" });
    expect((await getPolicy(admin)).versions).toHaveLength(1);
    const operator = await person(admin.teamId, "operator");
    await expect(createPolicyVersion(operator, { rules: [] })).rejects.toMatchObject({ code: "forbidden" });
    await expect(enablePolicy(operator, { version: null, reason: "x" })).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("approvals", () => {
  test("hold awaiting_approval names the approval; approving admits that call once, and the card leaves the queue", async () => {
    const { key, leaf, admin } = await world([APPROVE], ["token"]);
    const operationId = opKey();
    const args = { env: "preview", token: "s3cret" };
    const first = answer(await ask(key, leaf, { operationId, arguments: args }));
    expect(`${first.decision} ${first.reason}`).toBe("hold awaiting_approval");
    expect(first.approvalId).toMatch(/^apr_/);
    const again = answer(await ask(key, leaf, { operationId, arguments: args }));
    expect(again.approvalId).toBe(first.approvalId);
    const open = await listApprovals(admin, {});
    expect(open.map((a) => a.id)).toEqual([first.approvalId]);
    expect(open[0]!.arguments).toEqual({ env: "preview", token: "[redacted]" });
    expect(open[0]!.mayDecide).toBe(true);
    const operator = await person(admin.teamId, "operator");
    const decided = await decideApproval(operator, first.approvalId!, { decision: "approve", note: "preview only" });
    expect(decided.state).toBe("approved");
    expect(said(await ask(key, leaf, { operationId, arguments: args }))).toBe("allow allowed");
    expect((await getApproval(admin, first.approvalId!)).usedAt).not.toBeNull();
    expect(await listApprovals(admin, {})).toEqual([]);
    const op = await prisma().operation.findUnique({ where: { teamId_operationId: { teamId: admin.teamId, operationId } } });
    expect(op?.state).toBe("running");
  });

  test("an approval is bound to the arguments and the operation: approving call A never admits call B", async () => {
    const { key, leaf, admin } = await world([APPROVE]);
    const a = { operationId: opKey("a"), arguments: { env: "preview" } };
    const held = answer(await ask(key, leaf, a));
    await decideApproval(admin, held.approvalId!, { decision: "approve" });
    // same operation id, other arguments: a call of its own, waiting for its own yes
    const other = answer(await ask(key, leaf, { operationId: a.operationId, arguments: { env: "production" } }));
    expect(`${other.decision} ${other.reason}`).toBe("hold awaiting_approval");
    expect(other.approvalId).not.toBe(held.approvalId);
    // same arguments, another operation id: also its own
    const b = answer(await ask(key, leaf, { operationId: opKey("b"), arguments: a.arguments }));
    expect(`${b.decision} ${b.reason}`).toBe("hold awaiting_approval");
    expect(b.approvalId).not.toBe(held.approvalId);
    expect(said(await ask(key, leaf, a))).toBe("allow allowed");
  });

  test("denied → approval_denied (recorded); past its deadline → approval_expired, and a late yes is refused", async () => {
    const { key, leaf, admin } = await world([APPROVE]);
    const d = { operationId: opKey("d") };
    const held = answer(await ask(key, leaf, d));
    await decideApproval(admin, held.approvalId!, { decision: "deny", note: "not today" });
    expect(said(await ask(key, leaf, d))).toBe("deny approval_denied");
    expect(said(await ask(key, leaf, d))).toBe("deny approval_denied");

    const e = { operationId: opKey("e") };
    const late = answer(await ask(key, leaf, e));
    await prisma().approval.update({ where: { id: late.approvalId! }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await listApprovals(admin, {})).map((x) => x.id)).not.toContain(late.approvalId);
    await expect(decideApproval(admin, late.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "conflict" });
    expect(said(await ask(key, leaf, e))).toBe("deny approval_expired");
  });

  test("a pause voids the subtree's open approvals at once; after resume the same call waits for a new yes", async () => {
    const { key, leaf, root, admin } = await world([APPROVE]);
    const call = { operationId: opKey("p") };
    const held = answer(await ask(key, leaf, call));
    const approved = answer(await ask(key, leaf, { operationId: opKey("q") }));
    await decideApproval(admin, approved.approvalId!, { decision: "approve" }); // approved, not yet used
    await pauseRun(admin, root.runId, "look first");
    for (const id of [held.approvalId!, approved.approvalId!]) {
      const a = await getApproval(admin, id);
      expect({ state: a.state, cause: a.voidCause }).toEqual({ state: "voided", cause: "paused" });
    }
    expect(await listApprovals(admin, {})).toEqual([]);
    await expect(decideApproval(admin, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "conflict" });
    expect(said(await ask(key, leaf, call))).toBe("hold paused");
    await resumeRun(admin, root.runId, "carry on");
    const fresh = answer(await ask(key, leaf, call));
    expect(`${fresh.decision} ${fresh.reason}`).toBe("hold awaiting_approval");
    expect(fresh.approvalId).not.toBe(held.approvalId);
  });

  test("a kill voids them too, and a yes given after the kill admits nothing", async () => {
    const { key, leaf, root, admin } = await world([APPROVE]);
    const call = { operationId: opKey("k") };
    const held = answer(await ask(key, leaf, call));
    await killRun(admin, root.runId, "stop it");
    expect((await getApproval(admin, held.approvalId!)).voidCause).toBe("killed");
    await expect(decideApproval(admin, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "conflict" });
    expect(answer(await ask(key, leaf, call)).decision).toBe("deny");
  });

  test("a yes racing a kill: whichever commits first, the approval ends voided and the call is never admitted", async () => {
    for (let i = 0; i < 8; i++) {
      const { key, leaf, root, admin } = await world([APPROVE]);
      const call = { operationId: opKey("race") };
      const held = answer(await ask(key, leaf, call));
      const operator = await person(admin.teamId, "operator");
      const [yes] = await Promise.allSettled([
        decideApproval(operator, held.approvalId!, { decision: "approve" }),
        killRun(admin, root.runId, "race"),
      ]);
      const after = answer(await ask(key, leaf, call));
      expect(after.decision).toBe("deny");
      const a = await getApproval(admin, held.approvalId!);
      expect({ state: a.state, cause: a.voidCause, used: a.usedAt }).toEqual({ state: "voided", cause: "killed", used: null });
      // the yes either came first (then the kill voided it) or was refused because the kill came first
      if (yes.status === "rejected") expect(yes.reason).toMatchObject({ code: "conflict" });
      expect(await prisma().operation.count({ where: { runId: leaf.runId, state: "running" } })).toBe(0);
    }
  });

  test("who answers: the rule's role or named people; never the run's holder; another team's approval is not found", async () => {
    const w = await makeGateWorld(1);
    const admin = await person(w.team.teamId, "admin");
    const viewer = await person(w.team.teamId, "viewer");
    const named = await person(w.team.teamId, "viewer");
    const v = await createPolicyVersion(admin, {
      rules: [{ name: "named", effect: "require_approval", approval: { role: "manager", users: [named.email] } }],
    });
    await enablePolicy(admin, { version: v.version, reason: "t" });
    // A run held by a person's operator key: that person is the holder, not an approver.
    const holderPerson = await person(w.team.teamId, "admin");
    const holderKey = await makeKey(w.team.teamId, { kind: "operator", userId: holderPerson.userId });
    const [run] = await makeChain(w.team.teamId, [{ holderKeyId: holderKey.keyId }]);
    const held = answer(await ask(holderKey, run!));
    expect(held.reason).toBe("awaiting_approval");
    await expect(decideApproval(holderPerson, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "forbidden" });
    const operator = await person(w.team.teamId, "operator");
    await expect(decideApproval(operator, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(decideApproval(viewer, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "forbidden" });
    const agentKey: Principal = {
      type: "key",
      keyId: w.key.keyId,
      teamId: w.team.teamId,
      kind: "agent",
      scopes: [],
      userId: null,
      role: null,
    };
    await expect(decideApproval(agentKey, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "forbidden" });
    const stranger = await makeGateWorld(1);
    const strangerAdmin = await person(stranger.team.teamId, "admin");
    await expect(decideApproval(strangerAdmin, held.approvalId!, { decision: "approve" })).rejects.toMatchObject({ code: "not_found" });
    await expect(getApproval(strangerAdmin, held.approvalId!)).rejects.toMatchObject({ code: "not_found" });
    expect((await getApproval(admin, held.approvalId!)).state).toBe("pending");
    expect((await decideApproval(named, held.approvalId!, { decision: "approve" })).state).toBe("approved");
  });

  test("the sweep announces each new card once (approval.requested) and expires the late ones", async () => {
    const { key, leaf, admin } = await world([APPROVE]);
    await prisma().webhookEndpoint.create({
      data: {
        id: `wh_${opKey()}`,
        teamId: admin.teamId,
        url: "https://example.test/hook",
        secret: "s",
        eventTypes: ["approval.requested"],
        enabled: true,
        createdBy: "test",
      },
    });
    const held = answer(await ask(key, leaf));
    const system: Principal = { type: "system", name: "test" };
    expect((await sweepApprovals(system, admin.teamId)).announced).toBe(1);
    expect((await sweepApprovals(system, admin.teamId)).announced).toBe(0);
    const events = await prisma().webhookDelivery.findMany({ where: { teamId: admin.teamId, type: "approval.requested" } });
    expect(events).toHaveLength(1);
    expect((events[0]!.event as { data: { approval_id: string } }).data.approval_id).toBe(held.approvalId);
    await prisma().approval.update({ where: { id: held.approvalId! }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect((await sweepApprovals(system, admin.teamId)).expired).toBe(1);
    expect((await getApproval(admin, held.approvalId!)).state).toBe("expired");
  });
});

describe("budgets", () => {
  test("concurrent callers never cross a budget: exactly the limit is admitted, the rest budget_exhausted", async () => {
    const { key, leaf, admin } = await world([{ name: "ten-calls", effect: "budget", budget: { unit: "calls", limit: 10 } }]);
    // Sixteen connections, each its own transaction per call (not batched), asking at once.
    const clients = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        return c;
      }),
    );
    const answers = (
      await Promise.all(
        clients.map(async (c) => {
          const out: GateOutcome[] = [];
          for (let i = 0; i < 4; i++)
            out.push(
              await gateCheck(
                { keyHash: key.hash, runId: leaf.runId, leaseId: leaf.leaseId, epoch: leaf.epoch, operationId: opKey(), tool: "t" },
                c,
              ),
            );
          return out;
        }),
      )
    ).flat();
    await Promise.all(clients.map((c) => c.end()));
    const tally = answers.map(said).reduce<Record<string, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});
    expect(tally).toEqual({ "allow allowed": 10, "deny budget_exhausted": 54 });
    const [b] = await listBudgets(admin);
    expect(b!.usage).toEqual([expect.objectContaining({ used: 10, held: 10 })]);
  });

  test("in batches: a batch that fits is admitted at once, one that does not is decided call by call, and two racing batches never cross", async () => {
    const { key, leaf, admin } = await world([{ name: "ten-calls", effect: "budget", budget: { unit: "calls", limit: 10 } }]);
    const input = () => call(key, leaf);
    const fits = await gateCheckBatch(Array.from({ length: 4 }, input));
    expect(fits.map(said)).toEqual(Array(4).fill("allow allowed"));
    const [x, y] = await Promise.all([
      gateCheckBatch(Array.from({ length: 12 }, input)),
      gateCheckBatch(Array.from({ length: 12 }, input)),
    ]);
    const allowed = [...x, ...y].filter((o) => said(o) === "allow allowed").length;
    expect(allowed).toBe(6);
    expect([...x, ...y].filter((o) => said(o) === "deny budget_exhausted")).toHaveLength(18);
    const [b] = await listBudgets(admin);
    expect(b!.usage[0]!.used).toBe(10);
    expect((await reservations(admin.teamId)).length).toBe(10);
  });

  test("a batch waits for a concurrent reservation on its budget, counts it, and decides what no longer fits call by call", async () => {
    const { key, leaf, admin } = await world([{ name: "ten-calls", effect: "budget", budget: { unit: "calls", limit: 10 } }]);
    const input = () => call(key, leaf);
    expect((await gateCheckBatch(Array.from({ length: 4 }, input))).map(said)).toEqual(Array(4).fill("allow allowed"));
    // A spends 4 more inside an open transaction; B's batch waits for A's lock on the usage row. When A commits,
    // 8 + 4 no longer fits: B reserves nothing there, and its calls are decided one by one (two still fit).
    const a = new pg.Client({ connectionString: process.env.DATABASE_URL });
    const b = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query("BEGIN");
      expect((await gateCheckBatch(Array.from({ length: 4 }, input), a)).map(said)).toEqual(Array(4).fill("allow allowed"));
      const bPid = (await b.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const racing = gateCheckBatch(Array.from({ length: 4 }, input), b);
      for (let waited = 0; ; waited += 10) {
        const w = await a.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [bPid]);
        if (w.rowCount === 1) break;
        if (waited > 10_000) throw new Error("batch B never waited for A's lock");
        await new Promise((r) => setTimeout(r, 10));
      }
      await a.query("COMMIT");
      expect((await racing).map(said).sort()).toEqual(["allow allowed", "allow allowed", "deny budget_exhausted", "deny budget_exhausted"]);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
    const [usage] = await listBudgets(admin);
    expect(usage!.usage).toEqual([expect.objectContaining({ used: 10, held: 10 })]);
    expect((await reservations(admin.teamId)).length).toBe(10);
  });

  test("a batch call that loses its operationId to a concurrent call gives back what it reserved and is answered as a replay", async () => {
    const { key, leaf, admin } = await world([{ name: "ten-calls", effect: "budget", budget: { unit: "calls", limit: 10 } }]);
    // a first batch renews the lease, so that the racing batch below decides its calls itself
    expect((await gateCheckBatch([call(key, leaf), call(key, leaf)])).map(said)).toEqual(Array(2).fill("allow allowed"));
    const x = call(key, leaf);
    const a = new pg.Client({ connectionString: process.env.DATABASE_URL });
    const b = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await Promise.all([a.connect(), b.connect()]);
    try {
      // A admits x inside an open transaction (its reservation holds the usage row); B's batch carries x too.
      await a.query("BEGIN");
      expect(said(await gateCheck(x, a))).toBe("allow allowed");
      const bPid = (await b.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const racing = gateCheckBatch([x, call(key, leaf)], b);
      for (let waited = 0; ; waited += 10) {
        const w = await a.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [bPid]);
        if (w.rowCount === 1) break;
        if (waited > 10_000) throw new Error("batch B never waited for A's lock");
        await new Promise((r) => setTimeout(r, 10));
      }
      await a.query("COMMIT");
      const [replay, other] = await racing;
      expect(answer(replay!).operation?.operationId).toBe(x.operationId);
      expect(said(other!)).toBe("allow allowed");
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
    // the first two, x once (A's), the other call once: B's reservation for x was given back
    const [usage] = await listBudgets(admin);
    expect(usage!.usage).toEqual([expect.objectContaining({ used: 4, held: 4 })]);
    expect((await reservations(admin.teamId)).length).toBe(4);
  });

  test("in a batch: calls whose second budget does not fit give back what the first took, and are decided call by call", async () => {
    const { key, leaf, admin } = await world([
      { name: "a-many", effect: "budget", budget: { unit: "calls", limit: 100 } },
      { name: "b-two", effect: "budget", budget: { unit: "calls", limit: 2 } },
    ]);
    // three calls: "a-many" takes all three at once, "b-two" cannot — so none is admitted by the batch itself
    const out = await gateCheckBatch(Array.from({ length: 3 }, () => call(key, leaf)));
    expect(out.map(said).sort()).toEqual(["allow allowed", "allow allowed", "deny budget_exhausted"]);
    const used = Object.fromEntries((await listBudgets(admin)).map((b) => [b.name, b.usage[0]]));
    expect(used["a-many"]).toEqual(expect.objectContaining({ used: 2, held: 2 }));
    expect(used["b-two"]).toEqual(expect.objectContaining({ used: 2, held: 2 }));
    expect((await reservations(admin.teamId)).length).toBe(4);
  });

  test("in a batch over two run trees, the tree whose budget is spent is decided call by call and the other admitted at once", async () => {
    const w = await world([{ name: "per-tree", effect: "budget", budget: { unit: "calls", limit: 3, per: "run_tree" } }]);
    const other = (await makeChain(w.team.teamId, [{ holderKeyId: w.key.keyId }]))[0]!;
    // each tree's first batch also renews its lease, so that the batch below decides its calls itself
    expect((await gateCheckBatch(Array.from({ length: 3 }, () => call(w.key, w.leaf)))).map(said)).toEqual(Array(3).fill("allow allowed"));
    expect((await gateCheckBatch([call(w.key, other), call(w.key, other)])).map(said)).toEqual(Array(2).fill("allow allowed"));
    const out = await gateCheckBatch([call(w.key, w.leaf), call(w.key, other), call(w.key, w.leaf)]);
    expect(out.map(said)).toEqual(["deny budget_exhausted", "allow allowed", "deny budget_exhausted"]);
    const usage = (await listBudgets(w.admin))[0]!.usage.map((u) => [u.scopeKey, u.used]).sort();
    expect(usage).toEqual(
      [
        [other.runId, 3],
        [w.root.runId, 3],
      ].sort(),
    );
  });

  test("a call over two budgets that fits one and not the other reserves neither", async () => {
    const { key, leaf, admin } = await world([
      { name: "a-many", effect: "budget", budget: { unit: "calls", limit: 100 } },
      { name: "b-two", effect: "budget", budget: { unit: "calls", limit: 2 } },
    ]);
    const tally: string[] = [];
    for (let i = 0; i < 3; i++) tally.push(said(await ask(key, leaf, { tool: "t" })));
    expect(tally).toEqual(["allow allowed", "allow allowed", "deny budget_exhausted"]);
    const used = Object.fromEntries((await listBudgets(admin)).map((b) => [b.name, b.usage[0]?.used]));
    expect(used).toEqual({ "a-many": 2, "b-two": 2 });
    expect((await reservations(admin.teamId)).length).toBe(4);
  });

  test("a cost estimate is reserved, the actual cost replaces it, and work that never started gives it back", async () => {
    const { key, leaf, admin } = await world([{ name: "spend", effect: "budget", budget: { unit: "usd", limit: 1 } }]);
    const holder: Principal = { type: "key", keyId: key.keyId, teamId: admin.teamId, kind: "agent", scopes: [], userId: null, role: null };
    const a = opKey("a");
    expect(said(await ask(key, leaf, { operationId: a, cost: { usd: 0.6 } }))).toBe("allow allowed");
    expect(said(await ask(key, leaf, { cost: { usd: 0.5 } }))).toBe("deny budget_exhausted");
    await completeOperation(holder, a, { outcome: "succeeded", cost: { usd: 0.2 } });
    const used = async () => (await listBudgets(admin))[0]!.usage[0]!.used;
    expect(await used()).toBeCloseTo(0.2);
    const settled = (await reservations(admin.teamId)).find((x) => x.operationId === a);
    expect({ state: settled?.state, amount: settled?.amount, actual: settled?.actual }).toEqual({
      state: "settled",
      amount: 0.6,
      actual: 0.2,
    });
    const b = opKey("b");
    expect(said(await ask(key, leaf, { operationId: b, cost: { usd: 0.5 } }))).toBe("allow allowed");
    expect(await used()).toBeCloseTo(0.7);
    await prisma().operation.update({
      where: { teamId_operationId: { teamId: admin.teamId, operationId: b } },
      data: { state: "cancelled_not_started" },
    });
    expect(await used()).toBeCloseTo(0.2);
    const r = (await reservations(admin.teamId)).find((x) => x.operationId === b);
    expect({ state: r?.state, cause: r?.releaseCause }).toEqual({ state: "released", cause: "cancelled_not_started" });
    // A stranger of the same team cannot report the cost of work it does not hold.
    const stranger = await makeKey(admin.teamId, { kind: "agent" });
    const strangerP: Principal = {
      type: "key",
      keyId: stranger.keyId,
      teamId: admin.teamId,
      kind: "agent",
      scopes: [],
      userId: null,
      role: null,
    };
    const c = opKey("c");
    expect(said(await ask(key, leaf, { operationId: c, cost: { usd: 0.3 } }))).toBe("allow allowed");
    await expect(completeOperation(strangerP, c, { outcome: "succeeded", cost: { usd: 0 } })).rejects.toMatchObject({ code: "forbidden" });
    expect(await used()).toBeCloseTo(0.5);
  });

  test("a stop gives back the reservation of a call it settled as cancelled without effect, keeps an unknown one, and the receipt lists both", async () => {
    const { key, leaf, root, admin } = await world([{ name: "spend", effect: "budget", budget: { unit: "usd", limit: 10 } }]);
    const [a, b] = [opKey("a"), opKey("b")];
    for (const op of [a, b]) expect(said(await ask(key, leaf, { operationId: op, cost: { usd: 2 } }))).toBe("allow allowed");
    const { barrierId } = await killRun(admin, root.runId, "stop the spend");
    const rowOf = async (op: string) =>
      (await prisma().operation.findUniqueOrThrow({ where: { teamId_operationId: { teamId: admin.teamId, operationId: op } } })).id;
    for (const [op, state] of [
      [a, "cancelled_without_effect"],
      [b, "unknown"],
    ] as const)
      // the kill recorded the running calls; the engine's settlement is written here by hand
      await prisma().settlement.update({
        where: { barrierId_operationId: { barrierId, operationId: await rowOf(op) } },
        data: { settledState: state, settledAt: new Date() },
      });
    expect((await listBudgets(admin))[0]!.usage[0]!.used).toBe(2);
    const now = new Date();
    const facts = await prisma().$transaction((tx) => loadEvidenceFactsTx(tx, barrierId, now));
    const { body } = buildReceipt(facts, { version: 1, previousDigest: null, verifiedAt: now });
    expect((body as { budget_reservations?: unknown[] }).budget_reservations).toEqual([
      expect.objectContaining({
        operation_id: a,
        budget: "spend",
        unit: "usd",
        state: "released",
        release_cause: "cancelled_without_effect",
      }),
      expect.objectContaining({ operation_id: b, budget: "spend", unit: "usd", state: "held", release_cause: null }),
    ]);
  });

  test("crossing a budget trips the tree's breaker once, audited (never a kill)", async () => {
    const { key, leaf, root, admin } = await world([
      { name: "three", effect: "budget", budget: { unit: "calls", limit: 3, onCross: "trip_breaker" } },
    ]);
    for (let i = 0; i < 3; i++) expect(said(await ask(key, leaf))).toBe("allow allowed");
    const crossed = answer(await ask(key, leaf));
    expect(`${crossed.decision} ${crossed.reason} ${crossed.budget}`).toBe("deny budget_exhausted three");
    const r = await prisma().run.findUniqueOrThrow({ where: { id: root.runId } });
    expect({ breaker: r.breaker, held: r.breakerHeld, lifecycle: r.lifecycle, by: r.breakerChangedBy }).toEqual({
      breaker: "open",
      held: true,
      lifecycle: "normal",
      by: "system:budget",
    });
    expect(said(await ask(key, leaf))).toBe("deny breaker_open");
    const audit = await prisma().auditEvent.findMany({ where: { teamId: admin.teamId, action: "breaker.trip", target: root.runId } });
    expect(audit).toHaveLength(1);
    expect(await prisma().budgetCrossing.count({ where: { teamId: admin.teamId } })).toBe(1);
  });

  test("a per-minute budget held by policy answers hold, and a pause-on-cross pauses the tree", async () => {
    const { key, leaf, root } = await world([
      { name: "rate", effect: "budget", budget: { unit: "calls", limit: 1, window: "minute", whenExhausted: "hold", onCross: "pause" } },
    ]);
    expect(said(await ask(key, leaf))).toBe("allow allowed");
    expect(said(await ask(key, leaf))).toBe("hold budget_exhausted");
    expect((await prisma().run.findUniqueOrThrow({ where: { id: root.runId } })).lifecycle).toBe("paused");
  });
});

describe("dry run", () => {
  test("counts what a version would have held and denied among the calls the gate allowed", async () => {
    const w = await makeGateWorld(1);
    const admin = await person(w.team.teamId, "admin");
    for (const tool of ["deployment.reserve_preview", "deployment.reserve_preview", "search.web", "db.drop"])
      expect(said(await ask(w.key, w.leaf, { tool }))).toBe("allow allowed");
    const v = await createPolicyVersion(admin, {
      rules: [
        { name: "no-drop", tool: "db.drop", effect: "deny" },
        APPROVE,
        { name: "two", effect: "budget", budget: { unit: "calls", limit: 1 } },
        { name: "usd", effect: "budget", budget: { unit: "usd", limit: 1 } },
      ],
    });
    const r = await dryRunPolicy(admin, v.version, { days: 1 });
    expect(r).toMatchObject({ considered: 4, wouldHold: 2, wouldDeny: 1, wouldDenyBudget: 0, notSimulated: ["usd"], truncated: false });
    expect((await getPolicy(admin)).enabledVersion).toBeNull();
  });
});
