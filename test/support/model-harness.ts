// The model-based test of the stop evidence (docs/evidence.md): fast-check commands against the REAL PostgreSQL (kill transaction,
// triggers, gate rows) and the REAL barrier engine (claimBarriers + processBarriers + pause reclaim:
// the code `quiesce barrier-worker` runs each wake, driven here in this process).
//
// Each sequence builds a fresh random tree (depth ≤ 4) and applies random commands: operations of every
// kind and state, completions (succeeded / failed / aborted_unknown, on a live or a killed tree — the
// latter is a late report), lost reports (the executor never answers), pauses and resumes, long pauses
// (reclaimed by the engine), nested kills in any order, acknowledgments, engine steps, engine crashes
// (the engine stops mid-work and its claims stay held until they expire, as a killed process leaves
// them), assignments and resolutions. Then the engine runs until every barrier issued its receipt, and
// I1–I6 (and that each latest receipt still says what is true) are checked for every barrier of the tree. fast-check prints the seed and the shrunk path of a
// failing sequence for replay (`{ seed, path }`).
import { createHash, randomBytes } from "node:crypto";
import fc from "fast-check";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { completeOperation } from "../../lib/modules/runs/operations";
import { recordObserved } from "../../lib/modules/stop/observed";
import { assignReconciliation, resolveReconciliation } from "../../lib/modules/stop/reconciliations";
import { recordRecovery, startRecovery } from "../../lib/modules/stop/recovery";
import { startSimProvider, type SimServer } from "../../lib/modules/stop/providers/sim-server";
import { claimBarriers } from "../../lib/modules/stop/engine/claim";
import { reclaimOverduePauses } from "../../lib/modules/runs/pause-reclaim";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { getReceipt } from "../../lib/modules/stop/barriers";
import { getConsoleReceipt } from "../../lib/modules/stop/console/receipt";
import { loadEvidenceFactsTx } from "../../lib/modules/stop/internal/evidence";
import { processBarriers } from "../../lib/modules/stop/engine/engine";
import { deriveEvidence } from "../../lib/control/evidence/model";
import { serializeReceipt } from "../../lib/control/evidence/receipt";
import { canonicalJson, sha256Hex } from "../../lib/control/canonical";
import type { Principal } from "../../lib/platform/auth/principal";
import { i1Violation, rungFacts } from "./evidence-oracle";

const SYSTEM: Principal = { type: "system", name: "model-test" };
const ENGINE: Principal = { type: "system", name: "barrier-engine" };
// A call without a provider settles (unknown) later than a quiet period ends: a root barrier that did
// not wait for its subtree would issue its receipt while a child's call is still in flight.
export const MODEL_ENGINE = { claimMs: 400, localSettleMs: 90, quietPeriodMs: 20, pausePolicySeconds: 60 };

export interface ModelTeam {
  teamId: string;
  operator: Principal;
  manager: Principal;
  admin: Principal;
  worker: Principal;
  agent: Principal;
  /** A key of the same team that holds nothing: everything it reports must be refused and leave no trace. */
  stranger: Principal;
  strangerKeyId: string;
  adminUserId: string;
  managerUserId: string;
  /** The simulated deployment provider ("sim"): commits during the cancel, and undoes or keeps the effect when asked to compensate. */
  sim: SimServer;
  close(): Promise<void>;
}

/** A team for the model test: members of each role, a worker key, an unreachable provider, small timings. */
export async function makeModelTeam(): Promise<ModelTeam> {
  const teamId = newId("team");
  await prisma().team.create({ data: { id: teamId, slug: teamId.toLowerCase(), name: `Model ${teamId}` } });
  const users: Record<string, { id: string; principal: Principal }> = {};
  for (const role of ["operator", "manager", "admin"] as const) {
    const id = newId("user");
    const email = `${role}-${id.slice(5, 13).toLowerCase()}@model.test`;
    await prisma().user.create({ data: { id, email, name: role } });
    await prisma().membership.create({ data: { id: newId("mem"), teamId, userId: id, role } });
    users[role] = { id, principal: { type: "user", userId: id, email, teamId, role } };
  }
  const keyId = newId("key");
  await prisma().apiKey.create({
    data: {
      id: keyId,
      teamId,
      kind: "worker",
      name: "model worker",
      scopes: [],
      secretHash: createHash("sha256").update(keyId).digest("hex"),
    },
  });
  const strangerKeyId = newId("key");
  await prisma().apiKey.create({
    data: {
      id: strangerKeyId,
      teamId,
      kind: "agent",
      name: "model stranger",
      scopes: [],
      secretHash: createHash("sha256").update(strangerKeyId).digest("hex"),
    },
  });
  // A provider nobody can reach: cancel and status fail fast, so its calls settle unknown at the deadline.
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId,
      name: "down",
      kind: "http",
      cancelUrl: "http://127.0.0.1:9/c/{providerJobId}",
      statusUrl: "http://127.0.0.1:9/s/{providerJobId}",
      timeoutMs: 30,
      settleDeadlineMs: 60,
      quietPeriodSeconds: 0,
    },
  });
  // A provider that commits during the cancel (the engine finds the effect present: a recovery item opens)
  // and declares a compensation endpoint; each job's compensation answers absent or present (Recover).
  const sim = await startSimProvider();
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId,
      name: "sim",
      kind: "simulated",
      cancelUrl: `${sim.url}/jobs/{providerJobId}/cancel`,
      statusUrl: `${sim.url}/jobs/{providerJobId}/effect`,
      compensateUrl: `${sim.url}/jobs/{providerJobId}/compensate`,
      timeoutMs: 500,
      settleDeadlineMs: 1000,
      quietPeriodSeconds: 0,
      rollbackOwner: "model-oncall",
    },
  });
  await setTeamStopSettings(SYSTEM, teamId, {
    quietPeriodMs: MODEL_ENGINE.quietPeriodMs,
    pausePolicySeconds: MODEL_ENGINE.pausePolicySeconds,
  });
  return {
    teamId,
    operator: users.operator!.principal,
    manager: users.manager!.principal,
    admin: users.admin!.principal,
    worker: { type: "key", keyId, teamId, kind: "worker", scopes: [], userId: null, role: null },
    agent: { type: "key", keyId, teamId, kind: "agent", scopes: [], userId: null, role: null },
    stranger: { type: "key", keyId: strangerKeyId, teamId, kind: "agent", scopes: [], userId: null, role: null },
    strangerKeyId,
    adminUserId: users.admin!.id,
    managerUserId: users.manager!.id,
    sim,
    close: () => sim.close(),
  };
}

// ---- the model --------------------------------------------------------------------------------
interface MRun {
  id: string;
  parent: number | null;
  depth: number;
  leaseId: string;
}
interface MOp {
  operationId: string;
  rowId: string;
  run: number;
  reported: boolean;
}
export interface Model {
  team: ModelTeam;
  runs: MRun[];
  ops: MOp[];
  kills: number;
  log: string[];
}
type Real = { team: ModelTeam };

const runKilled = async (m: Model, i: number) =>
  (await prisma().run.findUniqueOrThrow({ where: { id: m.runs[i]!.id }, select: { lifecycle: true } })).lifecycle;

abstract class Cmd implements fc.AsyncCommand<Model, Real> {
  abstract label(): string;
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  abstract act(m: Model, r: Real): Promise<void>;
  async run(m: Model, r: Real): Promise<void> {
    m.log.push(this.label());
    await this.act(m, r);
  }
  toString(): string {
    return this.label();
  }
}

class AddOp extends Cmd {
  constructor(
    readonly at: number,
    readonly state: "queued" | "scheduled" | "running",
    readonly kind: "call" | "queued" | "scheduled" | "retry",
    readonly provider: "down" | "sim" | null,
  ) {
    super();
  }
  label() {
    return `addOp(run ${this.at}, ${this.kind}/${this.state}${this.provider ? `, provider ${this.provider}` : ""})`;
  }
  check(m: Readonly<Model>) {
    return this.at < m.runs.length;
  }
  async act(m: Model) {
    const run = m.runs[this.at]!;
    // Only a live tree takes new work (registration and admission refuse a killed one).
    if ((await prisma().run.count({ where: { id: { in: pathOf(m, this.at) }, lifecycle: "killed" } })) > 0) return;
    const rowId = newId("op");
    const operationId = `m-${rowId.slice(3, 17)}`;
    const jobId = `job-${rowId}`;
    if (this.provider === "sim")
      await fetch(`${m.team.sim.url}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jobId, mode: "commit_during_cancel", runId: run.id, operationId }),
      }).then((r) => {
        if (!r.ok) throw new Error(`provider-sim refused job ${jobId}: ${r.status}`);
      });
    await prisma().operation.create({
      data: {
        id: rowId,
        teamId: m.team.teamId,
        operationId,
        runId: run.id,
        leaseId: run.leaseId,
        epochStamp: 1,
        kind: this.kind,
        tool: "model.tool",
        state: this.state,
        providerName: this.provider,
        providerJobId: this.provider ? jobId : null,
        startedAt: this.state === "running" ? new Date() : null,
        registeredByKey: (m.team.worker as { keyId: string }).keyId,
      },
    });
    m.ops.push({ operationId, rowId, run: this.at, reported: false });
  }
}

class Complete extends Cmd {
  constructor(
    readonly op: number,
    readonly outcome: "succeeded" | "failed" | "aborted_unknown",
  ) {
    super();
  }
  label() {
    return `complete(op ${this.op}, ${this.outcome})`;
  }
  check(m: Readonly<Model>) {
    return this.op < m.ops.length && !m.ops[this.op]!.reported;
  }
  async act(m: Model) {
    const op = m.ops[this.op]!;
    op.reported = true;
    const row = await prisma().operation.findUniqueOrThrow({ where: { id: op.rowId }, select: { state: true } });
    if (row.state !== "running") return;
    // On a killed tree this is a late report: recorded as evidence, the caller gets 409.
    await completeOperation(m.team.worker, op.operationId, {
      outcome: this.outcome,
      ...(this.outcome === "succeeded" ? { effect: { providerOperationId: `eff-${op.rowId}` } } : {}),
    } as never).catch((e: { code?: string }) => {
      if (e?.code !== "conflict") throw e;
    });
  }
}

/** Another key of the team reports on work it does not hold: refused, whatever the tree's state. */
class StrangerReport extends Cmd {
  constructor(
    readonly op: number,
    readonly outcome: "succeeded" | "failed" | "aborted_unknown",
    readonly observe: boolean,
  ) {
    super();
  }
  label() {
    return `strangerReport(op ${this.op}, ${this.outcome}${this.observe ? ", observed" : ""})`;
  }
  check(m: Readonly<Model>) {
    return this.op < m.ops.length;
  }
  async act(m: Model) {
    const op = m.ops[this.op]!;
    const refused = (e: { code?: string }) => {
      if (e?.code !== "forbidden") throw new Error(`a stranger's report was not refused: ${String(e?.code ?? e)}`);
    };
    await completeOperation(m.team.stranger, op.operationId, {
      outcome: this.outcome,
      ...(this.outcome === "succeeded" ? { effect: { providerOperationId: `forged-${op.rowId}` } } : {}),
    } as never).then(() => {
      throw new Error("a stranger's report was accepted");
    }, refused);
    if (this.observe)
      await recordObserved(m.team.stranger, m.runs[op.run]!.id, { meaning: "process_terminated" }).then(() => {
        throw new Error("a stranger's observation was accepted");
      }, refused);
  }
}

class LoseReport extends Cmd {
  constructor(readonly op: number) {
    super();
  }
  label() {
    return `loseReport(op ${this.op})`;
  }
  check(m: Readonly<Model>) {
    return this.op < m.ops.length && !m.ops[this.op]!.reported;
  }
  async act(m: Model) {
    m.ops[this.op]!.reported = true;
  } // the executor never answers
}

class Pause extends Cmd {
  constructor(
    readonly at: number,
    readonly long: boolean,
  ) {
    super();
  }
  label() {
    return `${this.long ? "longPause" : "pause"}(run ${this.at})`;
  }
  check(m: Readonly<Model>) {
    return this.at < m.runs.length;
  }
  async act(m: Model) {
    const id = m.runs[this.at]!.id;
    if ((await runKilled(m, this.at)) !== "normal") return;
    await pauseRun(m.team.operator, id, "model pause");
    // A long pause: as if the team's policy had already run out (time passes in the rows, not the test).
    if (this.long)
      await prisma().run.update({
        where: { id },
        data: { lifecycleChangedAt: new Date(Date.now() - (MODEL_ENGINE.pausePolicySeconds + 1) * 1000) },
      });
  }
}

class Resume extends Cmd {
  constructor(readonly at: number) {
    super();
  }
  label() {
    return `resume(run ${this.at})`;
  }
  check(m: Readonly<Model>) {
    return this.at < m.runs.length;
  }
  async act(m: Model) {
    if ((await runKilled(m, this.at)) !== "paused") return;
    await resumeRun(m.team.operator, m.runs[this.at]!.id, "model resume");
  }
}

class Kill extends Cmd {
  constructor(readonly at: number) {
    super();
  }
  label() {
    return `kill(run ${this.at})`;
  }
  check(m: Readonly<Model>) {
    return this.at < m.runs.length;
  }
  async act(m: Model) {
    m.kills++;
    await killRun(m.team.operator, m.runs[this.at]!.id, "model kill");
  }
}

class Observe extends Cmd {
  constructor(
    readonly at: number,
    readonly meaning: "signal_accepted" | "turn_interrupted" | "process_terminated",
  ) {
    super();
  }
  label() {
    return `observe(run ${this.at}, ${this.meaning})`;
  }
  check(m: Readonly<Model>) {
    return this.at < m.runs.length;
  }
  async act(m: Model) {
    await recordObserved(m.team.agent, m.runs[this.at]!.id, { meaning: this.meaning }).catch((e: { code?: string }) => {
      if (e?.code !== "conflict") throw e;
    });
  }
}

class EngineStep extends Cmd {
  constructor(
    readonly ms: number,
    readonly crash: boolean,
  ) {
    super();
  }
  label() {
    return `${this.crash ? "engineCrash" : "engineStep"}(${this.ms} ms)`;
  }
  async act(m: Model) {
    await driveEngine(m.team.teamId, this.ms, this.crash);
  }
}

class Resolve extends Cmd {
  constructor(
    readonly pick: number,
    readonly resolution: "effect_present" | "effect_absent",
    readonly assignFirst: boolean,
  ) {
    super();
  }
  label() {
    return `${this.assignFirst ? "assign+" : ""}resolve(#${this.pick}, ${this.resolution})`;
  }
  async act(m: Model) {
    const open = await prisma().reconciliation.findMany({
      where: { teamId: m.team.teamId, status: { not: "resolved" }, operation: { runId: { in: m.runs.map((r) => r.id) } } },
      orderBy: { id: "asc" },
    });
    const rec = open[this.pick % Math.max(1, open.length)];
    if (!rec) return;
    if (this.assignFirst) await assignReconciliation(m.team.admin, rec.id, m.team.managerUserId);
    await resolveReconciliation(this.assignFirst ? m.team.manager : m.team.admin, rec.id, {
      resolution: this.resolution,
      evidence: "checked the system of record",
    });
  }
}

/**
 * A person acts on a recovery item of the tree: starts the provider's compensation — the provider-sim then
 * answers absent (it undid the effect) or present (it accepted but kept it); "down" declares no endpoint, so
 * that start is refused — or records an outcome (a person's rollback, acceptance, failure).
 */
class Recover extends Cmd {
  constructor(
    readonly pick: number,
    readonly how: "start" | "rolled_back" | "accepted" | "failed" | "in_progress",
    readonly answer: "absent" | "present",
  ) {
    super();
  }
  label() {
    return `recover(#${this.pick}, ${this.how}${this.how === "start" ? `, provider answers ${this.answer}` : ""})`;
  }
  async act(m: Model) {
    const open = await prisma().recoveryItem.findMany({
      where: {
        teamId: m.team.teamId,
        state: { in: ["open", "in_progress", "failed"] },
        operation: { runId: { in: m.runs.map((r) => r.id) } },
      },
      include: { operation: { select: { providerJobId: true } } },
      orderBy: { id: "asc" },
    });
    const item = open[this.pick % Math.max(1, open.length)];
    if (!item) return;
    const job = item.operation.providerJobId ? m.team.sim.jobs.get(item.operation.providerJobId) : undefined;
    if (job) job.compensation = this.answer === "absent" ? "release" : "ignore";
    // Refusals (no compensation endpoint; a move the states do not allow) change nothing: I7 checks what is left.
    await (
      this.how === "start"
        ? startRecovery(m.team.admin, item.id)
        : recordRecovery(m.team.admin, item.id, { state: this.how, note: "model: done by hand", evidence: "model evidence" })
    ).catch((e: { code?: string }) => {
      if (e.code !== "conflict") throw e;
    });
  }
}

function pathOf(m: Readonly<Model>, i: number): string[] {
  const out: string[] = [];
  for (let j: number | null = i; j !== null; j = m.runs[j]!.parent) out.unshift(m.runs[j]!.id);
  return out;
}

// ---- the engine, driven in-process -----------------------------------------------------------
/**
 * One engine instance for `ms`: pause reclaim, then claim and process barriers (the worker's loop body).
 * A crash stops it mid-work and leaves its claims held until they expire, as a killed process does.
 */
export async function driveEngine(teamId: string, ms: number, crash = false): Promise<void> {
  const ac = new AbortController();
  const workerId = `engine:model:${randomBytes(4).toString("hex")}`;
  const timer = setTimeout(() => ac.abort(), ms);
  const log = () => {};
  // Like the worker: several barriers at once (a root and its child's barrier race for real), and what is
  // claimable together is claimed together and stepped as a batch (processBarriers), as the worker does.
  const active = new Map<string, Promise<void>>();
  const claimedIds = new Set<string>();
  const opts = {
    principal: ENGINE,
    workerId,
    claimMs: MODEL_ENGINE.claimMs,
    localSettleMs: MODEL_ENGINE.localSettleMs,
    concurrency: 4,
    signal: ac.signal,
    log,
    subtreePollMs: 10,
  };
  try {
    while (!ac.signal.aborted) {
      await reclaimOverduePauses(ENGINE, teamId);
      const claimed = active.size < 3 ? await claimBarriers(ENGINE, workerId, MODEL_ENGINE.claimMs, [...claimedIds], teamId, 3) : [];
      if (claimed.length === 0) {
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      const ids = claimed.map((c) => c.id);
      const key = ids.join(",");
      for (const id of ids) claimedIds.add(id);
      const work = processBarriers(ids, opts);
      active.set(
        key,
        work.finally(() => {
          active.delete(key);
          for (const id of ids) claimedIds.delete(id);
        }),
      );
    }
    await Promise.all(active.values());
  } finally {
    clearTimeout(timer);
    ac.abort();
    await Promise.allSettled(active.values());
    if (crash) {
      // What a SIGKILLed engine leaves behind: its claims, still held until they expire.
      await prisma().$executeRawUnsafe(
        `UPDATE barriers SET claimed_by = $2, claim_expires_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000)
          WHERE team_id = $1 AND phase <> 'complete' AND (claimed_by IS NULL OR claimed_by = $2)`,
        teamId,
        workerId,
        MODEL_ENGINE.claimMs,
      );
    }
  }
}

/** Runs the engine until every barrier of the tree issued a receipt for its current state (bounded). */
async function settleAll(m: Model): Promise<void> {
  const runIds = m.runs.map((r) => r.id);
  for (let i = 0; i < 60; i++) {
    const open = await prisma().barrier.count({ where: { runId: { in: runIds }, phase: { not: "complete" } } });
    const paused = await prisma().run.count({
      where: {
        id: { in: runIds },
        lifecycle: "paused",
        lifecycleChangedAt: { lt: new Date(Date.now() - MODEL_ENGINE.pausePolicySeconds * 1000) },
      },
    });
    if (open === 0 && paused === 0) return;
    await driveEngine(m.team.teamId, 150);
  }
  throw new Error(`barriers of the tree did not complete: ${m.log.join(" → ")}`);
}

// ---- invariants ---------------------------------------------------------------------------------
export async function checkInvariants(m: Model): Promise<void> {
  const runIds = m.runs.map((r) => r.id);
  const fail = (what: string) => {
    throw new Error(`${what}\n  sequence: ${m.log.join(" → ")}`);
  };

  // I2: every unknown outcome has exactly one reconciliation, with an owner.
  const unknowns = await prisma().operation.findMany({
    where: { runId: { in: runIds }, state: "aborted_unknown" },
    select: { operationId: true, reconciliation: true },
  });
  for (const u of unknowns) {
    if (!u.reconciliation) fail(`I2: ${u.operationId} is unknown without a reconciliation`);
    if (!u.reconciliation!.assigneeUserId) fail(`I2: the reconciliation of ${u.operationId} has no owner`);
    if (u.reconciliation!.status === "resolved") fail(`I2: ${u.operationId} is still unknown but its reconciliation is resolved`);
  }
  const recCount = await prisma().$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM (SELECT r.operation_id FROM reconciliations r JOIN operations o ON o.id = r.operation_id WHERE o.run_id = ANY ($1::text[]) GROUP BY r.operation_id HAVING count(*) > 1) x`,
    runIds,
  );
  if (recCount[0]!.n > 0) fail("I2: an operation has more than one reconciliation");

  // I6: nothing a non-holder said is evidence: no claim, effect receipt, settlement, resolution or
  // acknowledgment of the tree carries the stranger's key.
  const trace = await prisma().$queryRawUnsafe<{ what: string }[]>(
    `SELECT 'claim' AS what FROM operation_claims c JOIN operations o ON o.id = c.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND c.reported_by LIKE '%' || $2 || '%'
     UNION ALL SELECT 'effect receipt' FROM effect_receipts e JOIN operations o ON o.id = e.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND (e.detail::text LIKE '%' || $2 || '%' OR e.provider_operation_id LIKE 'forged-%')
     UNION ALL SELECT 'settlement' FROM settlements s JOIN operations o ON o.id = s.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND s.settled_reason LIKE '%' || $2 || '%'
     UNION ALL SELECT 'resolution' FROM reconciliations r JOIN operations o ON o.id = r.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND r.resolved_by LIKE '%' || $2 || '%'
     UNION ALL SELECT 'acknowledgment' FROM barriers b WHERE b.run_id = ANY ($1::text[]) AND b.observed_evidence::text LIKE '%' || $2 || '%'`,
    runIds,
    m.team.strangerKeyId,
  );
  if (trace.length > 0) fail(`I6: a non-holder's report left a trace: ${trace.map((t) => t.what).join(", ")}`);

  // I7 (docs/evidence.md#recovery): every effect a barrier found completed has exactly one recovery item; a
  // rolled_back item was proven — by a provider check after the compensation that answered absent, or by a
  // person's note and evidence — and a final item names who made it so.
  const recovery = await prisma().$queryRawUnsafe<{ what: string; id: string }[]>(
    `SELECT 'completed effect without a recovery item' AS what, s.id FROM settlements s JOIN operations o ON o.id = s.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND s.settled_state = 'completed_and_verified'
        AND NOT EXISTS (SELECT 1 FROM recovery_items ri WHERE ri.operation_id = s.operation_id)
     UNION ALL SELECT 'rolled_back by a provider without a later absent check', ri.id FROM recovery_items ri JOIN operations o ON o.id = ri.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND ri.state = 'rolled_back' AND ri.settled_by = 'provider'
        AND NOT (ri.verified_effect = 'absent' AND ri.verified_at >= ri.compensation_requested_at)
     UNION ALL SELECT 'rolled_back by nobody, or a person without note and evidence', ri.id FROM recovery_items ri JOIN operations o ON o.id = ri.operation_id
      WHERE o.run_id = ANY ($1::text[]) AND ri.state IN ('rolled_back', 'accepted')
        AND (ri.settled_by IS NULL OR ri.changed_by IS NULL OR (ri.settled_by = 'person' AND (ri.note IS NULL OR ri.evidence IS NULL)))`,
    runIds,
  );
  if (recovery.length > 0) fail(`I7: ${recovery.map((r) => `${r.what} (${r.id})`).join(", ")}`);
  // I7 against the provider's own truth, not the item's record of it: an item the provider-sim's check
  // proved rolled back is a job the sim has undone (its effect answers absent now).
  const byProvider = await prisma().recoveryItem.findMany({
    where: { state: "rolled_back", settledBy: "provider", operation: { runId: { in: runIds }, providerName: "sim" } },
    select: { id: true, operation: { select: { providerJobId: true } } },
  });
  for (const ri of byProvider) {
    const job = m.team.sim.jobs.get(ri.operation.providerJobId ?? "");
    if (job?.state !== "compensated") fail(`I7: ${ri.id} is rolled_back by the provider, whose effect check still answers present`);
  }

  const barriers = await prisma().barrier.findMany({ where: { runId: { in: runIds } }, orderBy: { requestedAt: "asc" } });
  for (const b of barriers) {
    const receipts = await prisma().stopReceipt.findMany({ where: { barrierId: b.id }, orderBy: { version: "asc" } });
    if (receipts.length === 0) fail(`barrier ${b.id} issued no receipt`);
    // I3: digest = sha256 of the RFC 8785 form of the body; versions chain by previous_digest.
    receipts.forEach((r, i) => {
      const { digest: _d, ...rest } = r.body as Record<string, unknown>;
      if (canonicalJson(rest) !== r.canonical) fail(`I3: v${r.version} of ${b.id}: stored canonical text differs from the body`);
      if (sha256Hex(r.canonical) !== r.digest || (r.body as { digest?: string }).digest !== r.digest)
        fail(`I3: v${r.version} of ${b.id}: digest mismatch`);
      if (r.version !== i + 1) fail(`I3: versions of ${b.id} are not 1..n`);
      const prev = (r.body as { previous_digest?: string | null }).previous_digest ?? null;
      if (prev !== (i === 0 ? null : receipts[i - 1]!.digest)) fail(`I3: v${r.version} of ${b.id} does not chain to v${i}`);
      // I1 as the receipt itself states it: stopped_and_quiet only with nothing pending, unknown, open or active, after the quiet period.
      const body = r.body as any;
      if (
        r.decision === "stopped_and_quiet" &&
        (body.effects.unknown ||
          body.work.in_flight_pending ||
          body.authority.active_leases ||
          body.reconciliation.some((x: any) => x.status !== "resolved") ||
          (body.quiet_until && body.verified_at < body.quiet_until))
      ) {
        fail(`I1: v${r.version} of ${b.id} says stopped_and_quiet but its own body disagrees`);
      }
    });
    const latest = receipts.at(-1)!;
    const facts = await prisma().$transaction((tx) => loadEvidenceFactsTx(tx, b.id, new Date()), { isolationLevel: "RepeatableRead" });
    // I1 over the facts as they are now: nothing happened after the last receipt that it did not say.
    if (latest.decision === "stopped_and_quiet") {
      const v = i1Violation(facts);
      if (v) fail(`I1: ${b.id} v${latest.version} says stopped_and_quiet but ${v}`);
    }
    // The latest receipt says what is true now (nothing changed since that it did not re-issue for):
    // a barrier that issued early, or was never told of a later settlement, fails here.
    const ev = deriveEvidence(facts);
    if (latest.decision !== ev.decision)
      fail(`fresh: ${b.id} v${latest.version} says ${latest.decision} but the facts now say ${ev.decision}`);
    const lb = latest.body as any;
    if (lb.work.in_flight_pending !== ev.counts.pending || lb.effects.unknown !== ev.counts.unknown) {
      fail(
        `fresh: ${b.id} v${latest.version} says ${lb.work.in_flight_pending} pending / ${lb.effects.unknown} unknown but the facts now say ${ev.counts.pending} / ${ev.counts.unknown}`,
      );
    }
    // I5: a rung is done exactly when its fact holds.
    const want = rungFacts(facts);
    for (const rung of ev.ladder) {
      if ((rung.status === "done") !== want[rung.id])
        fail(`I5: rung ${rung.id} of ${b.id} is ${rung.status} but its fact is ${want[rung.id]}`);
    }
    // I4: the API read, the console read model and the downloads give the same bytes.
    const api = await getReceipt(m.team.operator, b.id);
    const con = await getConsoleReceipt(m.team.operator, b.id);
    for (const f of ["json", "yaml"] as const) {
      if (serializeReceipt(api.body, f) !== serializeReceipt(con!.body, f))
        fail(`I4: ${f} bytes of ${b.id} differ between API and console`);
    }
    if (!api.check.ok || !con!.check.ok) fail(`I4: ${b.id} does not verify: ${api.check.detail}`);
  }
}

// ---- the property -------------------------------------------------------------------------------
const treeArb = fc.array(fc.nat(10), { minLength: 0, maxLength: 5 }); // parent picks for runs 1..n
const recoverArb = fc
  .tuple(
    fc.nat(3),
    fc.constantFrom(
      "start" as const,
      "start" as const,
      "rolled_back" as const,
      "accepted" as const,
      "failed" as const,
      "in_progress" as const,
    ),
    fc.constantFrom("absent" as const, "present" as const),
  )
  .map(([p, h, a]) => new Recover(p, h, a));
/** What people do once the final stop settled: the effects it found completed are there to be undone. */
const afterStopArb = fc.array(recoverArb, { minLength: 1, maxLength: 3 });

function commandsArb(): fc.Arbitrary<Iterable<fc.AsyncCommand<Model, Real>>> {
  const run = fc.nat(5);
  const op = fc.nat(7);
  return fc.commands(
    [
      fc
        .tuple(
          run,
          fc.constantFrom("queued" as const, "scheduled" as const, "running" as const, "running" as const),
          fc.constantFrom("call" as const, "queued" as const, "scheduled" as const, "retry" as const),
          fc.constantFrom(null, "down" as const, "sim" as const, "sim" as const),
        )
        .map(([r, s, k, p]) => new AddOp(r, s, s === "running" ? "call" : k, s === "running" ? p : null)),
      // Twice more: a call to the provider-sim in flight at a kill is how an effect completes under a
      // barrier — the precondition of recovery (I7), which the general AddOp alone reaches too rarely.
      run.map((r) => new AddOp(r, "running", "call", "sim")),
      run.map((r) => new AddOp(r, "running", "call", "sim")),
      fc
        .tuple(op, fc.constantFrom("succeeded" as const, "failed" as const, "aborted_unknown" as const))
        .map(([o, x]) => new Complete(o, x)),
      op.map((o) => new LoseReport(o)),
      fc
        .tuple(op, fc.constantFrom("succeeded" as const, "failed" as const, "aborted_unknown" as const), fc.boolean())
        .map(([o, x, b]) => new StrangerReport(o, x, b)),
      fc.tuple(run, fc.boolean()).map(([r, l]) => new Pause(r, l)),
      run.map((r) => new Resume(r)),
      run.map((r) => new Kill(r)),
      run.map((r) => new Kill(r)),
      fc
        .tuple(run, fc.constantFrom("signal_accepted" as const, "turn_interrupted" as const, "process_terminated" as const))
        .map(([r, x]) => new Observe(r, x)),
      fc.tuple(fc.integer({ min: 5, max: 60 }), fc.boolean()).map(([ms, c]) => new EngineStep(ms, c)),
      fc
        .tuple(fc.nat(3), fc.constantFrom("effect_present" as const, "effect_absent" as const), fc.boolean())
        .map(([p, x, a]) => new Resolve(p, x, a)),
      // An item exists mid-sequence only after a kill and an engine step (or a resolution as present);
      // the phase after the final stop (modelProperty) acts on every sequence's items.
      recoverArb,
    ],
    { maxCommands: 9, size: "small" },
  );
}

async function buildTree(team: ModelTeam, parents: number[]): Promise<MRun[]> {
  const runs: MRun[] = [];
  const rootId = newId("run");
  const validUntil = new Date(Date.now() + 3600_000);
  const leasePaths: string[][] = [];
  for (let i = 0; i <= parents.length; i++) {
    const id = i === 0 ? rootId : newId("run");
    const candidates = runs.map((r, j) => ({ r, j })).filter(({ r }) => r.depth < 3);
    const parent = i === 0 ? null : candidates[parents[i - 1]! % candidates.length]!.j;
    const depth = parent === null ? 0 : runs[parent]!.depth + 1;
    const path: string[] = parent === null ? [id] : [...pathIds(runs, parent), id];
    const leaseId = newId("lease");
    const leasePath = parent === null ? [leaseId] : [...leasePaths[parent]!, leaseId];
    await prisma().run.create({
      data: {
        id,
        teamId: team.teamId,
        taskId: "model",
        parentRunId: parent === null ? null : runs[parent]!.id,
        rootRunId: rootId,
        path,
        depth,
        title: `run ${i}`,
        holderKeyId: (team.worker as { keyId: string }).keyId,
      },
    });
    await prisma().lease.create({
      data: {
        id: leaseId,
        teamId: team.teamId,
        runId: id,
        parentLeaseId: parent === null ? null : runs[parent]!.leaseId,
        path: leasePath,
        scopes: ["*"],
        validUntil,
      },
    });
    runs.push({ id, parent, depth, leaseId });
    leasePaths.push(leasePath);
  }
  return runs;
}
function pathIds(runs: MRun[], i: number): string[] {
  const out: string[] = [];
  for (let j: number | null = i; j !== null; j = runs[j]!.parent) out.unshift(runs[j]!.id);
  return out;
}

/** The property: any sequence, then the engine to completion, then recovery of what it found, then I1–I7. */
export function modelProperty(team: ModelTeam) {
  return fc.asyncProperty(treeArb, commandsArb(), afterStopArb, async (parents, cmds, afterStop) => {
    const runs = await buildTree(team, parents);
    const model: Model = { team, runs, ops: [], kills: 0, log: [`tree(${runs.map((r) => r.parent ?? "-").join(",")})`] };
    await fc.asyncModelRun(() => ({ model, real: { team } }), cmds);
    // Every tree ends stopped, so every sequence produces at least one barrier to check.
    await killRun(team.operator, runs[0]!.id, "model: final stop").catch(() => {});
    await settleAll(model);
    model.log.push("final stop settled");
    for (const c of afterStop) await c.run(model, { team });
    await checkInvariants(model);
  });
}
