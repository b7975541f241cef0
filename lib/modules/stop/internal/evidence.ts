// Loads the facts of a barrier's subtree for the evidence model (lib/control/evidence). ONE loader:
// the receipt issuer, the API's barrier view, the console's barrier page and the model-based test all
// read through it, so they cannot count differently. Internal: callers authorize first.
import "server-only";
import type { Tx } from "../../../platform/db/prisma";
import type { EvidenceFacts, OperationFact, ReconciliationFact, RunFact } from "../../../control/evidence/model";
import type { BarrierPhase } from "../../../control/barrier";
import { strongerMeaning, type ObservedMeaning } from "../../../control/barrier";
import type { OperationState } from "../../../control/types";
import type { RecoveryState } from "../../../control/recovery";
import { asEnvironmentEvidence, type EnvironmentMechanism } from "../../../control/evidence/environment";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** `user:<id>[ via key:…]` → the user's email; other actors as they are. */
function personOf(actor: string | null, email: Map<string, string>): string | null {
  if (!actor) return null;
  const m = /^user:([^ ]+)/.exec(actor);
  return m ? (email.get(m[1]!) ?? actor) : actor;
}

export type BarrierFacts = EvidenceFacts & { teamId: string; rootRunId: string };

/** The facts of one barrier's subtree: the set-based loader with one id (the receipt issuer, the API's and console's views). */
export async function loadEvidenceFactsTx(tx: Tx, barrierId: string, now: Date): Promise<BarrierFacts> {
  return (await loadEvidenceFactsManyTx(tx, [barrierId], now)).get(barrierId)!;
}

interface BarrierRow {
  id: string;
  team_id: string;
  run_id: string;
  root_run_id: string;
  epoch: number;
  requested_at: Date;
  requested_by: string;
  reason: string;
  new_epoch: number;
  phase: string;
  dispatch_stopped_at: Date | null;
  queued_cancelled_at: Date | null;
  runs_killed: number;
  leases_revoked: number;
  queued_cancelled: number;
  scheduled_cancelled: number;
  retries_cancelled: number;
  quiet_period_seconds: number | null;
  quiet_until: Date | null;
}

interface OperationRow {
  barrier_id: string;
  operation_id: string;
  run_id: string;
  tool: string;
  kind: string;
  state: string;
  provider_name: string | null;
  provider_job_id: string | null;
  finished_at: Date | null;
  s_barrier_id: string | null;
  s_state_at_barrier: string | null;
  s_cancel_requested_at: Date | null;
  s_provider_response: string | null;
  s_effect_expected: string | null;
  s_effect_observed: string | null;
  s_effect_checked_at: Date | null;
  s_settled_state: string | null;
  s_settled_at: Date | null;
  s_settled_reason: string | null;
  s_attempts: number | null;
  s_last_error: string | null;
  r_id: string | null;
  r_status: string | null;
  r_assignee_user_id: string | null;
  r_assigned_by: string | null;
  r_assigned_at: Date | null;
  r_resolution: string | null;
  r_evidence: string | null;
  r_resolved_at: Date | null;
  r_resolved_by: string | null;
  u_cause: string | null;
}

/** Rows of a statement grouped by their barrier, in the statement's order (each barrier's rows keep the SQL ordering). */
function byBarrier<T extends { barrier_id: string }>(rows: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.barrier_id);
    if (list) list.push(r);
    else out.set(r.barrier_id, [r]);
  }
  return out;
}

/**
 * The facts of many barriers at once (docs/fleet-stop.md#at-scale): one statement per table for the whole
 * set — the barriers, their subtrees' runs, leases, operations (with the latest settlement, the
 * reconciliation and the latest uncertain interval), providers, users, acknowledgments, effect receipts,
 * receipts and late requests — split by barrier here. Every statement carries the barrier each row is for
 * (a run under two barriers of the set, a child's and its root's, is a row for each), so a barrier's facts
 * are exactly those of its own subtree, in the order the per-barrier reads had: runs by depth, created_at,
 * id; operations by created_at, id; effect receipts by committed_at, id; receipts by version. Throws when
 * a barrier does not exist (as the one-barrier read did).
 */
export async function loadEvidenceFactsManyTx(tx: Tx, barrierIds: string[], now: Date): Promise<Map<string, BarrierFacts>> {
  const out = new Map<string, BarrierFacts>();
  const ids = [...new Set(barrierIds)];
  if (ids.length === 0) return out;
  const barriers = await tx.$queryRawUnsafe<BarrierRow[]>(
    `SELECT b.id, b.team_id, b.run_id, r.root_run_id, r.epoch, b.requested_at, b.requested_by, b.reason, b.new_epoch,
            b.phase::text AS phase, b.dispatch_stopped_at, b.queued_cancelled_at, b.runs_killed, b.leases_revoked,
            b.queued_cancelled, b.scheduled_cancelled, b.retries_cancelled, b.quiet_period_seconds, b.quiet_until
       FROM barriers b JOIN runs r ON r.id = b.run_id
      WHERE b.id = ANY ($1::text[])`,
    ids,
  );
  if (barriers.length !== ids.length) {
    const found = new Set(barriers.map((b) => b.id));
    throw new Error(`barrier not found: ${ids.filter((id) => !found.has(id)).join(", ")}`);
  }
  // Each barrier's subtree: the stopped run and its descendants, the stopped run first.
  const subtree = await tx.$queryRawUnsafe<{ barrier_id: string; id: string; lifecycle: string }[]>(
    `SELECT b.id AS barrier_id, c.id, c.lifecycle::text AS lifecycle
       FROM barriers b JOIN runs r ON r.id = b.run_id JOIN runs c ON c.root_run_id = r.root_run_id AND r.id = ANY (c.path)
      WHERE b.id = ANY ($1::text[])
      ORDER BY c.depth, c.created_at, c.id`,
    ids,
  );
  // The (barrier, run) pairs every later statement joins on, so no row can reach a barrier it is not under.
  const pairBarrier = subtree.map((r) => r.barrier_id);
  const pairRun = subtree.map((r) => r.id);
  const runsOf = byBarrier(subtree);

  const leaseRows = await tx.$queryRawUnsafe<
    { barrier_id: string; root_total: number; root_active: number; desc_revoked: number; active: number }[]
  >(
    `SELECT p.barrier_id,
            count(*) FILTER (WHERE l.run_id = b.run_id)::int AS root_total,
            count(*) FILTER (WHERE l.run_id = b.run_id AND l.revoked_at IS NULL AND l.valid_until > $3)::int AS root_active,
            count(*) FILTER (WHERE l.run_id <> b.run_id AND l.revoked_at IS NOT NULL)::int AS desc_revoked,
            count(*) FILTER (WHERE l.revoked_at IS NULL AND l.valid_until > $3)::int AS active
       FROM unnest($1::text[], $2::text[]) AS p(barrier_id, run_id)
       JOIN barriers b ON b.id = p.barrier_id
       JOIN leases l ON l.run_id = p.run_id
      GROUP BY p.barrier_id`,
    pairBarrier,
    pairRun,
    now,
  );
  const leasesOf = new Map(leaseRows.map((l) => [l.barrier_id, l]));

  // Every operation that matters to the completion rule: not terminal, unknown, or ever settled or
  // reconciled — whichever barrier first saw it. Work that finished before any stop adds nothing. With
  // its latest settlement (by id, whichever barrier's), its reconciliation and its latest uncertain interval.
  const opRows = await tx.$queryRawUnsafe<OperationRow[]>(
    `SELECT p.barrier_id, o.operation_id, o.run_id, o.tool, o.kind::text AS kind, o.state::text AS state, o.provider_name,
            o.provider_job_id, o.finished_at,
            s.barrier_id AS s_barrier_id, s.state_at_barrier::text AS s_state_at_barrier, s.cancel_requested_at AS s_cancel_requested_at,
            s.provider_response::text AS s_provider_response, s.effect_expected AS s_effect_expected,
            s.effect_observed AS s_effect_observed, s.effect_checked_at AS s_effect_checked_at,
            s.settled_state::text AS s_settled_state, s.settled_at AS s_settled_at, s.settled_reason AS s_settled_reason,
            s.attempts AS s_attempts, s.last_error AS s_last_error,
            rc.id AS r_id, rc.status::text AS r_status, rc.assignee_user_id AS r_assignee_user_id, rc.assigned_by AS r_assigned_by,
            rc.assigned_at AS r_assigned_at, rc.resolution::text AS r_resolution, rc.evidence AS r_evidence,
            rc.resolved_at AS r_resolved_at, rc.resolved_by AS r_resolved_by,
            u.cause::text AS u_cause
       FROM unnest($1::text[], $2::text[]) AS p(barrier_id, run_id)
       JOIN operations o ON o.run_id = p.run_id
       LEFT JOIN LATERAL (SELECT * FROM settlements x WHERE x.operation_id = o.id ORDER BY x.id DESC LIMIT 1) s ON true
       LEFT JOIN reconciliations rc ON rc.operation_id = o.id
       LEFT JOIN LATERAL (SELECT ui.cause FROM uncertain_intervals ui WHERE ui.operation_id = o.id ORDER BY ui.started_at DESC LIMIT 1) u
         ON rc.id IS NOT NULL
      WHERE o.state IN ('queued', 'scheduled', 'running', 'aborted_unknown') OR s.id IS NOT NULL OR rc.id IS NOT NULL
      ORDER BY o.created_at, o.id`,
    pairBarrier,
    pairRun,
  );
  const opsOf = byBarrier(opRows);

  const byTeamName = new Set<string>();
  const wanted = opRows.filter((o) => o.provider_name);
  if (wanted.length > 0) {
    const teamOf = new Map(barriers.map((b) => [b.id, b.team_id]));
    const rows = await tx.$queryRawUnsafe<{ team_id: string; name: string }[]>(
      `SELECT team_id, name FROM providers WHERE team_id = ANY ($1::text[]) AND name = ANY ($2::text[])`,
      [...new Set(wanted.map((o) => teamOf.get(o.barrier_id)!))],
      [...new Set(wanted.map((o) => o.provider_name!))],
    );
    for (const r of rows) byTeamName.add(`${r.team_id}\u0000${r.name}`);
  }
  const userIds = new Set<string>();
  for (const o of opRows) {
    if (o.r_assignee_user_id) userIds.add(o.r_assignee_user_id);
    const m = /^user:([^ ]+)/.exec(o.r_resolved_by ?? "");
    if (m) userIds.add(m[1]!);
  }
  const users = userIds.size
    ? await tx.$queryRawUnsafe<{ id: string; email: string }[]>(`SELECT id, email FROM users WHERE id = ANY ($1::text[])`, [...userIds])
    : [];
  const email = new Map(users.map((u) => [u.id, u.email]));

  // Acknowledgments are kept on whichever barrier covered the run when it was reported: every barrier of
  // each (team, tree) of the set, grouped by tree.
  const trees = [...new Map(barriers.map((b) => [`${b.team_id}\u0000${b.root_run_id}`, b])).values()];
  const ackRows = await tx.$queryRawUnsafe<{ team_id: string; root_run_id: string; observed_evidence: unknown }[]>(
    `SELECT o.team_id, r.root_run_id, o.observed_evidence
       FROM unnest($1::text[], $2::text[]) AS t(team_id, root_run_id)
       JOIN runs r ON r.root_run_id = t.root_run_id
       JOIN barriers o ON o.run_id = r.id AND o.team_id = t.team_id
      WHERE o.observed_evidence IS NOT NULL`,
    trees.map((t) => t.team_id),
    trees.map((t) => t.root_run_id),
  );
  const acksOfTree = new Map<string, unknown[]>();
  for (const a of ackRows) {
    const k = `${a.team_id}\u0000${a.root_run_id}`;
    acksOfTree.set(k, [...(acksOfTree.get(k) ?? []), a.observed_evidence]);
  }

  // Supervised runs' environments (docs/evidence.md#the-environment): the marker, the supervisor's evidence, the owner of an unknown.
  const envRows = await tx.$queryRawUnsafe<(EnvironmentRow & { barrier_id: string; run_id: string })[]>(
    `SELECT p.barrier_id, e.run_id, e.mechanism, e.weakest, e.supervised_at, e.evidence, e.evidence_at, e.unknown_since,
            coalesce(u.email, e.owner_user_id) AS owner, coalesce(ru.email, e.resolved_by) AS resolved_by, e.resolved_at,
            e.resolution_evidence
       FROM unnest($1::text[], $2::text[]) AS p(barrier_id, run_id)
       JOIN run_environments e ON e.run_id = p.run_id
       LEFT JOIN users u ON u.id = e.owner_user_id
       LEFT JOIN users ru ON ru.id = substring(e.resolved_by from '^user:([^ ]+)')`,
    pairBarrier,
    pairRun,
  );
  const envOf = new Map(envRows.map((e) => [`${e.barrier_id}\u0000${e.run_id}`, e]));

  // Rows kept per operation (effect receipts, claims, recovery items) of every barrier's subtree, split by barrier.
  const perOperation = async <T extends { barrier_id: string }>(columns: string, join: string, order: string) =>
    byBarrier(
      await tx.$queryRawUnsafe<T[]>(
        `SELECT p.barrier_id, o.operation_id, ${columns}
           FROM unnest($1::text[], $2::text[]) AS p(barrier_id, run_id)
           JOIN operations o ON o.run_id = p.run_id
           ${join}
          ORDER BY ${order}`,
        pairBarrier,
        pairRun,
      ),
    );

  const effectsOf = await perOperation<{
    barrier_id: string;
    operation_id: string;
    provider_operation_id: string | null;
    committed_at: Date;
    rollback_owner: string | null;
    source: string;
    detail: unknown;
  }>(
    "e.provider_operation_id, e.committed_at, e.rollback_owner, e.source, e.detail",
    "JOIN effect_receipts e ON e.operation_id = o.id",
    "e.committed_at, e.id",
  );

  const claimsOf = await perOperation<{
    barrier_id: string;
    operation_id: string;
    outcome: string;
    provider_operation_id: string | null;
    reported_by: string;
    claimed_at: Date;
  }>(
    "c.outcome, c.provider_operation_id, c.reported_by, c.claimed_at",
    "JOIN operation_claims c ON c.operation_id = o.id",
    "c.claimed_at, c.id",
  );

  const recoveriesOf = await perOperation<{
    barrier_id: string;
    operation_id: string;
    state: RecoveryState;
    settled_by: "provider" | "person" | null;
    provider_name: string | null;
    rollback_owner: string | null;
    assignee: string | null;
    changed_by: string | null;
    changed_at: Date | null;
    note: string | null;
    evidence: string | null;
    verified_at: Date | null;
    verified_effect: string | null;
  }>(
    "ri.state::text AS state, ri.settled_by, ri.provider_name, ri.rollback_owner, coalesce(ua.email, ri.assignee_user_id) AS assignee, coalesce(uc.email, ri.changed_by) AS changed_by, ri.changed_at, ri.note, ri.evidence, ri.verified_at, ri.verified_effect",
    "JOIN recovery_items ri ON ri.operation_id = o.id LEFT JOIN users ua ON ua.id = ri.assignee_user_id LEFT JOIN users uc ON uc.id = substring(ri.changed_by from '^user:([^ ]+)')",
    "ri.created_at, ri.id",
  );

  const reservationsOf = await perOperation<{
    barrier_id: string;
    operation_id: string;
    budget: string;
    unit: string;
    amount: string;
    actual: string | null;
    state: "held" | "settled" | "released";
    release_cause: string | null;
  }>(
    "br.budget, br.unit, trim_scale(br.amount)::text AS amount, trim_scale(br.actual)::text AS actual, br.state, br.release_cause",
    "CROSS JOIN LATERAL unnest(o.budget_reservations) WITH ORDINALITY AS br",
    "o.created_at, o.id, br.ordinality",
  );

  const receiptRows = await tx.$queryRawUnsafe<
    { barrier_id: string; version: number; decision: "stopped_and_quiet" | "stop_incomplete"; digest: string; verified_at: Date }[]
  >(
    `SELECT barrier_id, version, decision::text AS decision, digest, verified_at FROM stop_receipts
      WHERE barrier_id = ANY ($1::text[]) ORDER BY version`,
    ids,
  );
  const receiptsOf = byBarrier(receiptRows);

  // This team's denied requests about the subtree's runs since the stop (another team's calls never count).
  const lateRows = await tx.$queryRawUnsafe<{ barrier_id: string; n: number }[]>(
    `SELECT p.barrier_id, count(*)::int AS n
       FROM unnest($1::text[], $2::text[]) AS p(barrier_id, run_id)
       JOIN barriers b ON b.id = p.barrier_id
       JOIN gate_decisions g ON g.team_id = b.team_id AND g.run_id = p.run_id AND g.at >= b.requested_at AND g.decision = 'deny'
      GROUP BY p.barrier_id`,
    pairBarrier,
    pairRun,
  );
  const lateOf = new Map(lateRows.map((l) => [l.barrier_id, l.n]));

  for (const b of barriers) {
    const runs = runsOf.get(b.id) ?? [];
    const runIds = new Set(runs.map((r) => r.id));
    const acks = new Map<string, { meaning: ObservedMeaning; at: Date }>();
    for (const evidence of acksOfTree.get(`${b.team_id}\u0000${b.root_run_id}`) ?? []) {
      for (const a of Array.isArray(evidence) ? (evidence as { runId?: string; meaning?: string; at?: string }[]) : []) {
        if (!a?.runId || !a.meaning || !a.at || !runIds.has(a.runId)) continue;
        const prev = acks.get(a.runId);
        const meaning = strongerMeaning(prev?.meaning ?? null, a.meaning as ObservedMeaning);
        const at = prev && prev.at < new Date(a.at) ? prev.at : new Date(a.at);
        acks.set(a.runId, { meaning, at });
      }
    }
    const operations: OperationFact[] = (opsOf.get(b.id) ?? []).map((o) => {
      const rec: ReconciliationFact | null = o.r_id
        ? {
            id: o.r_id,
            status: o.r_status as ReconciliationFact["status"],
            assignee: o.r_assignee_user_id ? (email.get(o.r_assignee_user_id) ?? o.r_assignee_user_id) : null,
            assignedBy: o.r_assigned_by,
            assignedAt: o.r_assigned_at,
            resolution: o.r_resolution as ReconciliationFact["resolution"],
            evidence: o.r_evidence,
            resolvedAt: o.r_resolved_at,
            resolvedBy: personOf(o.r_resolved_by, email),
            cause: (o.u_cause as ReconciliationFact["cause"]) ?? null,
          }
        : null;
      return {
        operationId: o.operation_id,
        runId: o.run_id,
        tool: o.tool,
        kind: o.kind as OperationFact["kind"],
        state: o.state as OperationState,
        providerName: o.provider_name,
        hasProvider: !!o.provider_name && byTeamName.has(`${b.team_id}\u0000${o.provider_name}`),
        providerJob: o.provider_job_id,
        finishedAt: o.finished_at,
        settlement:
          o.s_barrier_id !== null
            ? {
                barrierId: o.s_barrier_id,
                stateAtBarrier: o.s_state_at_barrier as NonNullable<OperationFact["settlement"]>["stateAtBarrier"],
                cancelRequestedAt: o.s_cancel_requested_at,
                providerResponse: o.s_provider_response as NonNullable<OperationFact["settlement"]>["providerResponse"],
                effectExpected: o.s_effect_expected,
                effectObserved: o.s_effect_observed,
                effectCheckedAt: o.s_effect_checked_at,
                settledState: o.s_settled_state as NonNullable<OperationFact["settlement"]>["settledState"],
                settledAt: o.s_settled_at,
                settledReason: o.s_settled_reason,
                attempts: o.s_attempts!,
                lastError: o.s_last_error,
              }
            : null,
        reconciliation: rec,
      };
    });
    const runFacts: RunFact[] = runs.map((r) => ({
      id: r.id,
      lifecycle: r.lifecycle as RunFact["lifecycle"],
      acknowledgment: acks.get(r.id) ?? null,
      environment: environmentFact(envOf.get(`${b.id}\u0000${r.id}`)),
    }));
    const leases = leasesOf.get(b.id);
    out.set(b.id, {
      teamId: b.team_id,
      rootRunId: b.root_run_id,
      now,
      barrier: {
        id: b.id,
        runId: b.run_id,
        requestedAt: b.requested_at,
        requestedBy: b.requested_by,
        reason: b.reason,
        newEpoch: b.new_epoch,
        enginePhase: b.phase as BarrierPhase,
        dispatchStoppedAt: b.dispatch_stopped_at,
        queuedCancelledAt: b.queued_cancelled_at,
        runsKilled: b.runs_killed,
        leasesRevoked: b.leases_revoked,
        queuedCancelled: b.queued_cancelled,
        scheduledCancelled: b.scheduled_cancelled,
        retriesCancelled: b.retries_cancelled,
        quietPeriodSeconds: b.quiet_period_seconds,
        quietUntil: b.quiet_until,
      },
      runs: runFacts,
      leases: {
        rootLease: !leases || leases.root_total === 0 ? "none" : leases.root_active > 0 ? "active" : "revoked",
        descendantLeasesRevoked: leases?.desc_revoked ?? 0,
        active: leases?.active ?? 0,
      },
      currentEpoch: b.epoch,
      operations,
      effectReceipts: (effectsOf.get(b.id) ?? []).map((e) => ({
        operationId: e.operation_id,
        providerOperationId: e.provider_operation_id,
        committedAt: e.committed_at,
        rollbackOwner: e.rollback_owner,
        source: e.source,
        detail: e.detail,
      })),
      claims: (claimsOf.get(b.id) ?? []).map((c) => ({
        operationId: c.operation_id,
        outcome: c.outcome,
        providerOperationId: c.provider_operation_id,
        reportedBy: c.reported_by,
        claimedAt: c.claimed_at,
      })),
      recoveries: (recoveriesOf.get(b.id) ?? []).map((r) => ({
        operationId: r.operation_id,
        state: r.state,
        settledBy: r.settled_by,
        providerName: r.provider_name,
        // A provider-proved rollback is the provider's word; anything else is the last person's.
        by: r.settled_by === "provider" ? r.provider_name : r.changed_by,
        at: r.settled_by === "provider" ? iso(r.verified_at) : iso(r.changed_at),
        rollbackOwner: r.rollback_owner,
        assignee: r.assignee,
        note: r.note,
        evidence: r.evidence,
        verifiedAt: iso(r.verified_at),
        verifiedEffect: r.verified_effect,
      })),
      budgetReservations: (reservationsOf.get(b.id) ?? []).map((r) => ({
        operationId: r.operation_id,
        budget: r.budget,
        unit: r.unit,
        amount: r.amount,
        actual: r.actual,
        state: r.state,
        releaseCause: r.release_cause,
      })),
      lateRequestsDenied: lateOf.get(b.id) ?? 0,
      receipts: (receiptsOf.get(b.id) ?? []).map((r) => ({
        version: r.version,
        decision: r.decision,
        digest: r.digest,
        verifiedAt: r.verified_at,
      })),
    });
  }
  // In the order asked for.
  return new Map(ids.map((id) => [id, out.get(id)!]));
}

/** A run_environments row, as the loader reads it. */
interface EnvironmentRow {
  mechanism: string;
  weakest: boolean;
  supervised_at: Date;
  evidence: unknown;
  evidence_at: Date | null;
  unknown_since: Date | null;
  owner: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolution_evidence: string | null;
}

/** A run_environments row as the model reads it (null: the run had no supervisor). */
export function environmentFact(e: EnvironmentRow | undefined): RunFact["environment"] {
  if (!e) return null;
  return {
    mechanism: e.mechanism as EnvironmentMechanism,
    weakest: e.weakest,
    supervisedAt: e.supervised_at,
    evidence: asEnvironmentEvidence(e.evidence),
    evidenceAt: e.evidence_at,
    unknownSince: e.unknown_since,
    owner: e.owner,
    resolvedBy: e.resolved_by,
    resolvedAt: e.resolved_at,
    resolutionEvidence: e.resolution_evidence,
  };
}

/** Barriers of the tree whose subtree contains `runId` (the run's own and its ancestors'), oldest first. */
export async function coveringBarriersTx(tx: Tx, runId: string): Promise<{ id: string; phase: string }[]> {
  return tx.$queryRawUnsafe<{ id: string; phase: string }[]>(
    `SELECT b.id, b.phase::text AS phase FROM barriers b JOIN runs r ON r.id = $1 AND b.run_id = ANY (r.path)
      ORDER BY b.requested_at, b.id`,
    runId,
  );
}
