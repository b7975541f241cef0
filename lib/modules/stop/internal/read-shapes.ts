// The one mapper per concept from the stop module's rows to its read shape (lib/schemas/barriers.ts):
// a settlement from the evidence model's view of an operation, a reconciliation from its row. The API,
// the console and the CLI all read through these, so a field has one name everywhere
// (docs/design/read-shapes.md).
import "server-only";
import type { OperationEvidence } from "../../../control/evidence/model";
import { whyUnknownWords, type UnknownFacts } from "../../../control/stop-words";
import { jobPageUrl } from "../../../control/provider-url";
import type { ReceiptRef, Reconciliation, Settlement } from "../../../schemas/barriers";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function toSettlement({ op, outcome, settledBy, settledAt }: OperationEvidence): Settlement {
  const s = op.settlement;
  const r = op.reconciliation;
  return {
    operationId: op.operationId,
    runId: op.runId,
    tool: op.tool,
    provider: op.providerName,
    providerJobId: op.providerJob,
    barrierId: s?.barrierId ?? null,
    stateAtBarrier: s?.stateAtBarrier ?? null,
    cancelRequestedAt: iso(s?.cancelRequestedAt),
    providerResponse: s?.providerResponse ?? null,
    effectExpected: s?.effectExpected ?? null,
    effectObserved: s?.effectObserved ?? null,
    effectCheckedAt: iso(s?.effectCheckedAt),
    outcome,
    settledState: s?.settledState ?? null,
    settledBy,
    settledAt: iso(settledAt),
    settledReason: s?.settledReason ?? null,
    reconciliation: r
      ? {
          reconciliationId: r.id,
          status: r.status,
          assignee: r.assignee,
          assignedBy: r.assignedBy,
          resolution: r.resolution,
          resolvedBy: r.resolvedBy,
          resolvedAt: iso(r.resolvedAt),
          evidence: r.evidence,
        }
      : null,
  };
}

/** One issued version of a receipt, from its row or the evidence facts. */
export function toReceiptRef(r: { version: number; decision: string; digest: string; verifiedAt: Date }): ReceiptRef {
  return { version: r.version, decision: r.decision, digest: r.digest, verifiedAt: r.verifiedAt.toISOString() };
}

/** The include of a reconciliation row toReconciliation reads: its settlement, its operation and the operation's latest uncertain interval. */
export const RECONCILIATION_INCLUDE = {
  settlement: { select: { barrierId: true, settledReason: true, providerResponse: true, effectExpected: true } },
  operation: { include: { uncertainIntervals: { orderBy: { startedAt: "desc" as const }, take: 1 } } },
} as const;

export interface ReconciliationRow {
  id: string;
  teamId: string;
  status: Reconciliation["status"];
  assigneeUserId: string | null;
  assignedBy: string | null;
  assignedAt: Date | null;
  resolution: Reconciliation["resolution"];
  evidence: string | null;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  unknownReason: string | null;
  createdAt: Date;
  settlement: { barrierId: string; settledReason: string | null; providerResponse: string | null; effectExpected: string | null } | null;
  operation: {
    runId: string;
    operationId: string;
    tool: string;
    providerName: string | null;
    providerJobId: string | null;
    stateReason: string | null;
    uncertainIntervals: { cause: string }[];
  };
}

export type Person = { id: string; email: string; name: string };

/** A provider's job-page template, keyed by team and provider name (jobUrlKey). */
export type JobUrls = ReadonlyMap<string, string>;
export const jobUrlKey = (teamId: string, providerName: string) => `${teamId}\u0000${providerName}`;

/** What a reconciliation's read needs beyond its row: people, providers' job pages, whether its provider can be asked, the barrier that lists it. */
export interface ReconciliationContext {
  /** The assignees by user id (a missing one is shown by its id). */
  people: ReadonlyMap<string, Person>;
  /** The team's providers' job pages. */
  jobUrls: JobUrls;
  /** A providers row exists for the operation's provider name (the evidence model's `hasProvider`). */
  hasProvider: (r: ReconciliationRow) => boolean;
  /** The newest barrier over the operation's run, for an unknown no barrier settled: that barrier lists it as its unknown. */
  coveringBarrier: (r: ReconciliationRow) => string | null;
}

export function toReconciliation(r: ReconciliationRow, ctx: ReconciliationContext): Reconciliation {
  const { people, jobUrls } = ctx;
  const op = r.operation;
  const u = r.assigneeUserId
    ? (people.get(r.assigneeUserId) ?? { id: r.assigneeUserId, email: r.assigneeUserId, name: r.assigneeUserId })
    : null;
  return {
    id: r.id,
    teamId: r.teamId,
    barrierId: r.settlement?.barrierId ?? ctx.coveringBarrier(r),
    runId: op.runId,
    operationId: op.operationId,
    tool: op.tool,
    providerName: op.providerName,
    providerJobId: op.providerJobId,
    providerJobUrl: op.providerName
      ? jobPageUrl(jobUrls.get(jobUrlKey(r.teamId, op.providerName)) ?? null, {
          providerJobId: op.providerJobId,
          operationId: op.operationId,
          runId: op.runId,
        })
      : null,
    cause: op.uncertainIntervals[0]?.cause ?? null,
    // Open: the words the barrier's evidence uses for it. Resolved: the reason kept at resolution, since
    // resolving re-settled the operation; null for a row resolved before that reason was kept.
    whyUnknown: r.status === "resolved" ? r.unknownReason : whyUnknownWords(unknownFactsOf(r, ctx.hasProvider(r))),
    providerResponse: r.settlement?.providerResponse ?? null,
    effectExpected: r.settlement?.effectExpected ?? null,
    status: r.status,
    assignee: u ? { userId: u.id, email: u.email, name: u.name } : null,
    assignedBy: r.assignedBy,
    assignedAt: iso(r.assignedAt),
    resolution: r.resolution,
    evidence: r.evidence,
    resolvedAt: iso(r.resolvedAt),
    resolvedBy: r.resolvedBy,
    createdAt: r.createdAt.toISOString(),
  };
}

/** The facts the barrier's evidence reads to say why an outcome is unknown, from a reconciliation's row. */
export function unknownFactsOf(
  r: { settlement: { providerResponse: string | null } | null; operation: { uncertainIntervals: { cause: string }[] } },
  hasProvider: boolean,
): UnknownFacts {
  return {
    settled: r.settlement !== null,
    hasProvider,
    providerResponse: r.settlement?.providerResponse ?? null,
    cause: r.operation.uncertainIntervals[0]?.cause ?? null,
  };
}
