// Fleet stop (docs/fleet-stop.md): a stop scope is ONE durable decision — "every run of the team that
// matches this filter is paused / killed". The gate reads the scopes that apply inside its one
// statement (the SQL function quiesce_scope_matches, lib/modules/stop/sql/quiesce_scope_matches.sql, mirrors scopeMatches below; test/gate/oracle.test.ts
// checks they agree). Runs created after the scope that match are refused too. Pure: no I/O, no clock.
import { digestOf } from "./canonical";
import type { Harness, Lifecycle } from "./types";

export type ReceiptDecision = "stopped_and_quiet" | "stop_incomplete";

export const STOP_ACTIONS = ["pause", "kill"] as const;
export type StopAction = (typeof STOP_ACTIONS)[number];

/** What the runs list and a filter call a run: derived from lifecycle and completion. */
export const RUN_STATUSES = ["active", "paused", "killed", "finished"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Every member narrows; an empty filter is the whole team. Times are epoch ms. */
export interface StopFilter {
  harness?: readonly Harness[];
  /** the harness's agent identity (native agent id) or the run's creator label */
  agent?: readonly string[];
  taskPrefix?: string;
  /** inclusive */
  createdAfter?: number;
  /** exclusive */
  createdBefore?: number;
  status?: readonly RunStatus[];
  runIds?: readonly string[];
}

export interface ScopeRunFacts {
  runId: string;
  harness: Harness;
  nativeAgentId: string | null;
  createdBy: string | null;
  taskId: string;
  createdAt: number;
  lifecycle: Lifecycle;
  finishedAt: number | null;
}

export interface ScopeFacts {
  action: StopAction;
  filter: StopFilter;
}

export function runStatus(r: Pick<ScopeRunFacts, "lifecycle" | "finishedAt">): RunStatus {
  if (r.lifecycle === "killed") return "killed";
  if (r.finishedAt !== null) return "finished";
  return r.lifecycle === "paused" ? "paused" : "active";
}

export function isWholeTeam(f: StopFilter): boolean {
  return (
    !f.harness &&
    !f.agent &&
    f.taskPrefix === undefined &&
    f.createdAfter === undefined &&
    f.createdBefore === undefined &&
    !f.status &&
    !f.runIds
  );
}

/** Does this one run match the filter (its ancestors are not considered here)? */
export function scopeMatches(f: StopFilter, r: ScopeRunFacts): boolean {
  if (f.harness && !f.harness.includes(r.harness)) return false;
  if (f.agent && !f.agent.some((a) => a === r.nativeAgentId || a === r.createdBy)) return false;
  if (f.taskPrefix !== undefined && !r.taskId.startsWith(f.taskPrefix)) return false;
  if (f.createdAfter !== undefined && r.createdAt < f.createdAfter) return false;
  if (f.createdBefore !== undefined && r.createdAt >= f.createdBefore) return false;
  if (f.status && !f.status.includes(runStatus(r))) return false;
  if (f.runIds && !f.runIds.includes(r.runId)) return false;
  return true;
}

/**
 * What the live scopes say about a run, given its ancestry root first: a scope applies when the run or
 * any ancestor matches (stopping a run stops what it delegated). A kill outranks a pause.
 */
export function scopeAuthority(scopes: readonly ScopeFacts[], chain: readonly ScopeRunFacts[]): StopAction | null {
  let out: StopAction | null = null;
  for (const s of scopes) {
    if (!chain.some((r) => scopeMatches(s.filter, r))) continue;
    if (s.action === "kill") return "kill";
    out = "pause";
  }
  return out;
}

/** What a supervised run's process tree must be (docs/environment.md#pause-resume-kill). */
export type RunControl = "normal" | "paused" | "killed";

/**
 * The control a run's supervisor follows, in the gate's order: a kill of the run or an ancestor, or a
 * live kill scope that applies (scopeAuthority), outranks a pause of either. `lifecycle` is what the
 * chain's own lifecycles say; `stopIds` the applying scopes behind `control` (a kill's, or a pause's).
 */
export function runControl(
  scopes: readonly (ScopeFacts & { id: string })[],
  chain: readonly ScopeRunFacts[],
): { control: RunControl; lifecycle: RunControl; stopIds: string[] } {
  const lifecycle: RunControl = chain.some((r) => r.lifecycle === "killed")
    ? "killed"
    : chain.some((r) => r.lifecycle === "paused")
      ? "paused"
      : "normal";
  const scoped = scopeAuthority(scopes, chain);
  const control: RunControl =
    lifecycle === "killed" || scoped === "kill" ? "killed" : lifecycle === "paused" || scoped === "pause" ? "paused" : "normal";
  const action: StopAction = control === "killed" ? "kill" : "pause";
  const stopIds =
    control === "normal" ? [] : scopes.filter((s) => s.action === action && scopeAuthority([s], chain) !== null).map((s) => s.id);
  return { control, lifecycle, stopIds };
}

/**
 * The runs a kill scope fans a barrier out to: the matching runs that can still be stopped (not killed;
 * not finished, unless work of theirs is still queued or running), minus those under another such run (the barrier of the top-most one covers its subtree).
 */
export function barrierTargets(matched: readonly { runId: string; path: readonly string[] }[]): string[] {
  const ids = new Set(matched.map((m) => m.runId));
  return matched.filter((m) => !m.path.slice(0, -1).some((a) => ids.has(a))).map((m) => m.runId);
}

export interface FleetRunReceipt {
  runId: string;
  barrierId: string;
  decision: ReceiptDecision;
  digest: string;
  link: string;
}

export interface FleetReceiptInput {
  scopeId: string;
  teamId: string;
  action: StopAction;
  filter: StopFilter;
  reason: string;
  requestedBy: string;
  /** epoch ms */
  committedAt: number;
  issuedAt: number;
  matched: number;
  runs: readonly FleetRunReceipt[];
}

export interface FleetReceipt {
  body: Record<string, unknown>;
  canonical: string;
  digest: string;
  decision: ReceiptDecision;
}

/** stopped_and_quiet only when every run's receipt is (an empty fleet stopped nothing and is quiet). */
export function fleetDecision(runs: readonly Pick<FleetRunReceipt, "decision">[]): ReceiptDecision {
  return runs.every((r) => r.decision === "stopped_and_quiet") ? "stopped_and_quiet" : "stop_incomplete";
}

/** The fleet receipt body and its digest over the one canonical serializer (RFC 8785). */
export function buildFleetReceipt(i: FleetReceiptInput): FleetReceipt {
  const decision = fleetDecision(i.runs);
  // A total order (run, then barrier, digest, decision, link), so the digest never depends on input order.
  const key = (r: FleetRunReceipt) => [r.runId, r.barrierId, r.digest, r.decision, r.link].join("\u0000");
  const runs = [...i.runs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const body = {
    kind: "fleet_stop_receipt",
    scopeId: i.scopeId,
    teamId: i.teamId,
    action: i.action,
    filter: filterToJson(i.filter),
    reason: i.reason,
    requestedBy: i.requestedBy,
    committedAt: new Date(i.committedAt).toISOString(),
    issuedAt: new Date(i.issuedAt).toISOString(),
    matched: i.matched,
    barriers: runs.length,
    decision,
    runs: runs.map((r) => ({ runId: r.runId, barrierId: r.barrierId, decision: r.decision, digest: r.digest, link: r.link })),
  };
  const { canonical, digest } = digestOf(body);
  return { body: { ...body, digest }, canonical, digest, decision };
}

/** JSON form of a filter (times as ISO strings), members absent when unset. */
export function filterToJson(f: StopFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.harness) out.harness = [...f.harness];
  if (f.agent) out.agent = [...f.agent];
  if (f.taskPrefix !== undefined) out.taskPrefix = f.taskPrefix;
  if (f.createdAfter !== undefined) out.createdAfter = new Date(f.createdAfter).toISOString();
  if (f.createdBefore !== undefined) out.createdBefore = new Date(f.createdBefore).toISOString();
  if (f.status) out.status = [...f.status];
  if (f.runIds) out.runIds = [...f.runIds];
  return out;
}
