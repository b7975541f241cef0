// What each console page shows, assembled once so the server-rendered page and the JSON endpoint it
// polls return exactly the same shape (react-query's initialData is the first server render).
import "server-only";
import type { Principal } from "../../../platform/auth/principal";
import { listConsoleRuns, type RunsFilter, type RunsPage } from "./runs";
import type { ParsedRunsQuery } from "../../../schemas/runs-list";
import { getRunDetail, type RunDetail } from "./run-detail";
export type { TreeNode, UncertainRow } from "./run-detail";
export type { Rung } from "../../../control/evidence/model";
import { getConsoleBarrier, type BarrierDetail } from "../../stop/console/barrier";
import { listOpenWork, listTeamMembers, type Member, type OpenWorkFilter } from "../../stop/console/reconciliations";
import { countOpenWork } from "../../stop/console/counts";
import type { OpenWorkCounts } from "../../../control/open-work";
import type { RecoveryView } from "../../../schemas/recovery";
import { getConsoleReceipt } from "../../stop/console/receipt";
import type { ReceiptRecord } from "../../stop/barriers";
import type { Reconciliation } from "../../../schemas/barriers";
import { actorLabels } from "../../members/console/people";

export type Labels = Record<string, string>;

/** One page of the runs list, and the URL parameters that were ignored (shown on the page, never a 500). */
export type RunsView = RunsPage & { ignored: ParsedRunsQuery["ignored"] };
export async function runsView(
  p: Principal,
  parsed: ParsedRunsQuery,
  extra: Pick<RunsFilter, "parentRunId" | "pageSize"> = {},
): Promise<RunsView> {
  const { roots, ...q } = parsed.query;
  const page = await listConsoleRuns(p, { ...q, rootsOnly: roots === true, ...extra });
  return { ...page, ignored: parsed.ignored };
}

export type RunView = RunDetail & { labels: Labels };
export async function runView(p: Principal, runId: string): Promise<RunView> {
  const d = await getRunDetail(p, runId);
  const labels = await actorLabels(p, [
    ...d.tree.map((n) => n.lifecycleChangedBy),
    ...d.barriers.map((b) => b.requestedBy),
    ...d.uncertain.map((u) => u.resolvedBy),
    d.environment?.resolvedBy ?? null,
  ]);
  return { ...d, labels };
}

export type BarrierView = BarrierDetail & { labels: Labels };
export async function barrierView(p: Principal, barrierId: string): Promise<BarrierView> {
  const b = await getConsoleBarrier(p, barrierId);
  const labels = await actorLabels(p, [b.requestedBy]);
  const who = labels[b.requestedBy] ?? b.requestedBy;
  return {
    ...b,
    labels,
    ladder: b.ladder.map((r) => (r.id === "cancellation_requested" ? { ...r, detail: r.detail.replace(b.requestedBy, who) } : r)),
  };
}

/** The open-work page (docs/console.md#open-work): the team's counts, whatever the filters, and the filtered lists. */
export type OpenWorkView = {
  counts: OpenWorkCounts;
  reconciliations: Reconciliation[];
  recoveries: RecoveryView[];
  members: Member[];
  labels: Labels;
};
export async function openWorkView(p: Principal, filter: OpenWorkFilter): Promise<OpenWorkView> {
  const now = new Date();
  const [lists, counts, members] = await Promise.all([listOpenWork(p, filter, now), countOpenWork(p, now), listTeamMembers(p)]);
  const labels = await actorLabels(
    p,
    lists.reconciliations.flatMap((r) => [r.assignedBy, r.resolvedBy]),
  );
  return { counts, ...lists, members, labels };
}

export type ReceiptView = { receipt: ReceiptRecord | null };
export async function receiptView(p: Principal, barrierId: string, version?: number): Promise<ReceiptView> {
  return { receipt: await getConsoleReceipt(p, barrierId, version) };
}
