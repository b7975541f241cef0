// The gate decision (docs/architecture.md#the-gate) as a pure function of facts. The SQL function quiesce_gate
// (lib/modules/gate/sql/quiesce_gate.sql, and quiesce_gate_batch.sql beside it) implements the same decision inside
// PostgreSQL; test/gate/oracle.test.ts checks they agree on generated states. Change them together.
import { BREAKER_DEFAULTS, effectiveBreaker, type BreakerConfig } from "./breaker";
import { currentEpoch } from "./epoch";
import { scopeAuthority, type ScopeFacts, type ScopeRunFacts } from "./fleet";
import { decidePolicy, type PolicyFacts, type PolicyVerdict } from "./policy";
import { GATE_REASONS, type BreakerState, type Decision, type GateReason, type Lifecycle, type OperationState } from "./types";

export type GateMode = "gate" | "admit" | "heartbeat";

export interface RunFacts {
  runId: string;
  lifecycle: Lifecycle;
  breaker: BreakerState;
  breakerChangedAt: number;
  breakerProbeOpId: string | null;
  /** An operator's trip: open until an operator resets it. */
  breakerHeld?: boolean;
  epoch: number;
  /** When the run finished (epoch ms); a finished run's authority has ended. */
  finishedAt?: number | null;
}

export interface LeaseFacts {
  leaseId: string;
  runId: string;
  validUntil: number;
  revokedAt: number | null;
}

export interface OperationFacts {
  operationId: string;
  runId: string;
  state: OperationState;
  stateReason: string | null;
  expiresAt: number | null;
}

export interface GateFacts {
  /** epoch ms, read after the tree lock */
  now: number;
  mode: GateMode;
  request: { runId: string; leaseId: string | null; epoch: number; operationId: string };
  /** runs.path resolved root-first, ending with the run; a null entry is an unreadable ancestor;
   *  null when the run is missing or belongs to another team. */
  chain: readonly (RunFacts | null)[] | null;
  /** leases.path of the request's lease resolved root-first, ending with that lease; null when missing. */
  leaseChain: readonly (LeaseFacts | null)[] | null;
  /** The existing operation with the request's operationId in the caller's team, if any. */
  operation: OperationFacts | null;
  breakerConfig?: Pick<BreakerConfig, "coolDownMs" | "probeTimeoutMs">;
  /** The team's live stop scopes (docs/fleet-stop.md) and the filterable facts of the same chain. */
  scopes?: readonly ScopeFacts[];
  scopeChain?: readonly ScopeRunFacts[];
  /** The team's enabled policy and the call's approval and budget facts (docs/policies.md); absent: no policy. */
  policy?: PolicyFacts;
}

/** What happens to the operation row in the same transaction as the decision. */
export type OperationEffect =
  | { kind: "none" }
  /** a fresh call: insert the operation as running (allow) or denied (deny; a recorded deny stays deny) */
  | { kind: "insert"; state: "running" | "denied" }
  /** registered work (state queued / scheduled) admitted → running */
  | { kind: "start" }
  /** registered work refused at admission → denied */
  | { kind: "deny_registered" };

export interface GateVerdict {
  decision: Decision;
  reason: GateReason;
  /** Highest epoch along the run's ancestry (what a fresh stamp must be); null when the run is missing. */
  currentEpoch: number | null;
  effect: OperationEffect;
  /** Runs (this one or ancestors) whose half-open breaker admits this operation as its one probe. */
  probeClaims: string[];
  /** True when the answer comes from a recorded operation rather than a fresh decision. */
  replay: boolean;
  /** The policy step's verdict, when the team has a policy and the work would be admitted now. */
  policy?: PolicyVerdict;
}

const DENY_REASONS: ReadonlySet<string> = new Set(
  GATE_REASONS.filter((r) => r !== "allowed" && r !== "paused" && r !== "awaiting_approval"),
);
// Registered work waiting for admission (operation kinds queued / scheduled / retry).
const REGISTERED: ReadonlySet<OperationState> = new Set(["queued", "scheduled"]);

type Authority = { decision: Decision; reason: GateReason; probeClaims: string[] };

const deny = (reason: GateReason): Authority => ({ decision: "deny", reason, probeClaims: [] });

/** Steps 1–9 of docs/architecture.md#the-gate for the current authority, first match wins. */
export function decideAuthority(f: GateFacts): Authority {
  const { chain, leaseChain, request, now } = f;
  // 1. fail closed on anything missing or unreadable, including a lease that is not this run's.
  if (!chain || chain.length === 0 || chain.some((r) => r === null)) return deny("missing_state");
  const runs = chain as readonly RunFacts[];
  if (runs[runs.length - 1]!.runId !== request.runId) return deny("missing_state");
  if (!leaseChain || leaseChain.length === 0 || leaseChain.some((l) => l === null)) return deny("missing_state");
  const leases = leaseChain as readonly LeaseFacts[];
  const own = leases[leases.length - 1]!;
  if (own.leaseId !== request.leaseId || own.runId !== request.runId) return deny("missing_state");
  // 2. killed: an ancestor's kill is the cause for everything below it.
  const killedAt = runs.findIndex((r) => r.lifecycle === "killed");
  if (killedAt >= 0) return deny(killedAt === runs.length - 1 ? "killed" : "parent_revoked");
  // 2b. a live kill scope matching the run or an ancestor: killed, for good (docs/fleet-stop.md).
  const scoped = f.scopes && f.scopeChain ? scopeAuthority(f.scopes, f.scopeChain) : null;
  if (scoped === "kill") return deny("killed");
  // 2c. the run itself finished: finishing ends its authority (a fork or resume of it is a new run).
  if ((runs[runs.length - 1]!.finishedAt ?? null) !== null) return deny("finished");
  // 3. revoked lease: an ancestor lease first (it revokes all it delegated), then the run's own.
  if (leases.slice(0, -1).some((l) => l.revokedAt !== null)) return deny("parent_revoked");
  if (own.revokedAt !== null) return deny("lease_revoked");
  // 4. expired lease, own or ancestor.
  if (leases.some((l) => l.validUntil <= now)) return deny("lease_expired");
  // 5. a stamp older than any epoch along the ancestry.
  if (runs.some((r) => request.epoch < r.epoch)) return deny("stale_epoch");
  // 6. the operation's own deadline.
  const op = f.operation;
  if (op && op.expiresAt !== null && op.expiresAt <= now) return deny("operation_expired");
  // 7. breakers along the ancestry; a half-open one admits exactly one probe.
  const cfg = f.breakerConfig ?? BREAKER_DEFAULTS;
  const probeClaims: string[] = [];
  for (const r of runs) {
    const e = effectiveBreaker(
      { state: r.breaker, changedAt: r.breakerChangedAt, probeOpId: r.breakerProbeOpId, held: r.breakerHeld ?? false },
      now,
      request.operationId,
      cfg,
    );
    if (e.state === "blocked") return deny("breaker_open");
    if (e.state === "probe_available") probeClaims.push(r.runId);
  }
  // 8. paused anywhere above: hold (the caller asks again; nothing is recorded on the operation).
  if (runs.some((r) => r.lifecycle === "paused") || scoped === "pause") return { decision: "hold", reason: "paused", probeClaims: [] };
  // 9. allow.
  return { decision: "allow", reason: "allowed", probeClaims };
}

/** The reason a recorded refusal keeps answering with. */
export function recordedDenyReason(op: Pick<OperationFacts, "state" | "stateReason">): GateReason {
  if (op.stateReason !== null && DENY_REASONS.has(op.stateReason)) return op.stateReason as GateReason;
  // cancelled_not_started / aborted_unknown only come from a kill or an abort.
  return op.state === "denied" ? "missing_state" : "killed";
}

/**
 * The full gate answer, including the replay rules for an operationId that already exists:
 * finished → deny already_applied; running → allow while current authority allows, otherwise the
 * current hold/deny (a replay never outlives a kill, and never starts a second running operation);
 * a recorded deny stays deny; registered work (state queued/scheduled) is decided now and admitted.
 */
export function decideGate(f: GateFacts): GateVerdict {
  const v = decideByAuthority(f);
  // 10–12. the team's policy, only for work the authority admits now (a replay is answered from its record).
  const fresh = v.decision === "allow" && (v.effect.kind === "start" || (v.effect.kind === "insert" && v.effect.state === "running"));
  if (!fresh || !f.policy) return v;
  const p = decidePolicy(f.policy);
  if (p.decision === "allow") return { ...v, policy: p };
  const effect: OperationEffect =
    p.decision === "hold"
      ? { kind: "none" }
      : v.effect.kind === "start"
        ? { kind: "deny_registered" }
        : { kind: "insert", state: "denied" };
  return { ...v, decision: p.decision, reason: p.reason, effect, probeClaims: [], policy: p };
}

function decideByAuthority(f: GateFacts): GateVerdict {
  const a = decideAuthority(f);
  const chainOk =
    !!f.chain && f.chain.length > 0 && f.chain.every((r) => r !== null) && f.chain[f.chain.length - 1]!.runId === f.request.runId;
  const epoch = chainOk ? currentEpoch(f.chain as RunFacts[]) : null;
  const v = (
    decision: Decision,
    reason: GateReason,
    effect: OperationEffect,
    replay: boolean,
    probeClaims: string[] = [],
  ): GateVerdict => ({ decision, reason, currentEpoch: epoch, effect, probeClaims, replay });
  const op = f.operation;

  if (!op) {
    if (f.mode !== "gate") return v("deny", "missing_state", { kind: "none" }, false);
    if (a.decision === "allow") return v("allow", "allowed", { kind: "insert", state: "running" }, false, a.probeClaims);
    // A hold records nothing on the operation (it is decided afresh); a deny about a run that cannot be
    // read has no run to attach an operation to.
    if (a.decision === "deny" && a.reason !== "missing_state") return v("deny", a.reason, { kind: "insert", state: "denied" }, false);
    return v(a.decision, a.reason, { kind: "none" }, false);
  }
  if (op.runId !== f.request.runId) return v("deny", "missing_state", { kind: "none" }, false);

  switch (op.state) {
    case "succeeded":
    case "failed":
      return v("deny", "already_applied", { kind: "none" }, true);
    case "running":
      if (a.decision === "allow") return v("allow", "allowed", { kind: "none" }, true);
      return v(a.decision, a.reason, { kind: "none" }, true);
    case "denied":
    case "cancelled_not_started":
    case "aborted_unknown":
      return v("deny", recordedDenyReason(op), { kind: "none" }, true);
    default: {
      if (!REGISTERED.has(op.state)) return v("deny", "missing_state", { kind: "none" }, false);
      if (f.mode === "heartbeat") return v(a.decision, a.reason, { kind: "none" }, false);
      if (a.decision === "allow") return v("allow", "allowed", { kind: "start" }, false, a.probeClaims);
      if (a.decision === "deny") return v("deny", a.reason, { kind: "deny_registered" }, false);
      return v("hold", a.reason, { kind: "none" }, false);
    }
  }
}

/** Heartbeat answer: keep going while allowed or merely paused (a pause holds the NEXT call). */
export function heartbeatContinues(v: Pick<GateVerdict, "decision">): boolean {
  return v.decision !== "deny";
}
