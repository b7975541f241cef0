// The one mapper per concept from the stop module's rows to its read shape (lib/schemas/barriers.ts):
// a settlement from the evidence model's view of an operation, a reconciliation from its row. The API,
// the console and the CLI all read through these, so a field has one name everywhere
// (docs/design/read-shapes.md).
import "server-only";
import type { OperationEvidence } from "../../../control/evidence/model";
import { whyUnknownText } from "../../../control/reconciliation";
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

/** `people`: the assignees by user id (a missing one is shown by its id); `jobUrls`: the team's providers' job pages. */
export function toReconciliation(r: ReconciliationRow, people: ReadonlyMap<string, Person>, jobUrls: JobUrls): Reconciliation {
  const op = r.operation;
  const u = r.assigneeUserId
    ? (people.get(r.assigneeUserId) ?? { id: r.assigneeUserId, email: r.assigneeUserId, name: r.assigneeUserId })
    : null;
  return {
    id: r.id,
    teamId: r.teamId,
    barrierId: r.settlement?.barrierId ?? null,
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
    // Open: the settlement's reason (or, without a barrier, its executor's report). Resolved: the reason
    // kept at resolution, since resolving re-settled the operation and overwrote both; null for a row
    // resolved before that reason was kept.
    whyUnknown: r.status === "resolved" ? r.unknownReason : whyUnknownText(r.settlement?.settledReason, op.stateReason),
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
