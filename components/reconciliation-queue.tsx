"use client";
// Open work's unknown outcomes (components/open-work.tsx reads and filters them): each with its age and holder, and a link to
// the provider's own record of the job where the provider has one. Managers assign; the assignee (or a manager) records
// effect present / effect absent with evidence, which re-issues the stop receipt. Buttons appear only for those who may
// use them; the server checks again. Each action's result is reported by the page's toast.
import Link from "next/link";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState, type FormEvent } from "react";
import { useModal } from "./use-modal";
import type { OpenWorkView } from "@/lib/modules/runs";
import { assignReconciliationAction, resolveReconciliationAction } from "@/app/(console)/(lists)/reconciliations/actions";
import { openWorkEmpty, type OpenWorkEmptyFilter } from "@/lib/control/open-work";
import { ReconciliationBadge } from "./badges";
import { DataTable } from "./data-table";
import { Time } from "./time";
import { EmptyState, FormError, type ToastMessage } from "./states";
import { human, shortId } from "./format";
import { RESOLUTION_WORDS, wordFor } from "@/lib/control/stop-words";

type Row = OpenWorkView["reconciliations"][number];
type Members = OpenWorkView["members"];

const opLabel = (r: Row) => `${r.tool} (${r.operationId.length > 24 ? `${r.operationId.slice(0, 24)}…` : r.operationId})`;

/** The provider's own record of the job, opened beside the console; its name when there is no page to link. */
function ProviderJob({ row }: { row: Row }) {
  const job = row.providerJobId ? `job ${row.providerJobId}` : "its job";
  if (!row.providerJobUrl)
    return <>{row.providerJobId ? `${row.providerName ?? "its provider"} ${job}` : (row.providerName ?? "its provider")}</>;
  return (
    <a href={row.providerJobUrl} target="_blank" rel="noopener noreferrer" data-provider-job>
      {row.providerName} {job}
      <span className="sr-only"> (opens the provider&apos;s page in a new tab)</span>
    </a>
  );
}

export function ReconciliationQueue({
  items,
  members,
  labels,
  counts,
  filter,
  me,
  canAssign,
  canResolveAny,
  onFeedback,
}: {
  items: Row[];
  members: Members;
  labels: OpenWorkView["labels"];
  /** the team's counts, whatever the filters: what an empty list says the filters hide */
  counts: OpenWorkView["counts"];
  filter: OpenWorkEmptyFilter;
  me: string;
  canAssign: boolean;
  canResolveAny: boolean;
  onFeedback: (m: ToastMessage) => void;
}) {
  const [resolving, setResolving] = useState<Row | null>(null);
  const data = { items, labels, members };
  // Unknown outcomes have no due time: the "overdue" age lists none of them.
  const overdueOnly = filter.age === "overdue";
  const empty = overdueOnly || items.length === 0 ? openWorkEmpty("unknowns", filter, counts) : null;
  return (
    <section aria-labelledby="recon-title" className="stack">
      <div className="page-head">
        <h2 id="recon-title">Unknown outcomes</h2>
        <p className="muted">
          Outcomes the barrier could not prove either way. Each needs a person to check the authoritative system and record what they found.
        </p>
      </div>
      {empty ? (
        <div data-empty="unknowns">
          <EmptyState title={empty.title}>{empty.body || null}</EmptyState>
        </div>
      ) : null}
      {!overdueOnly && data.items.length > 0 ? (
        <DataTable
          scrollLabel="Outcomes to reconcile (table)"
          columns={["Age", "Operation", "Why unknown", "Status", "Assignee", "Action"]}
        >
          {data.items.map((r) => (
            <tr key={r.id} data-reconciliation={r.id}>
              <td>
                <Time iso={r.createdAt} mode="relative" />
                <div className="sub">
                  <Time iso={r.createdAt} mode="absolute" />
                </div>
              </td>
              <td>
                <span className="mono">{r.tool}</span>{" "}
                <span className="mono sub" title={r.operationId}>
                  {r.operationId.length > 24 ? `${r.operationId.slice(0, 24)}…` : r.operationId}
                </span>
                <div className="sub">
                  {r.providerJobUrl ? (
                    <ProviderJob row={r} />
                  ) : (
                    `${r.providerName ?? "no provider"}${r.providerJobId ? ` / ${r.providerJobId}` : ""}`
                  )}{" "}
                  · run <Link href={`/runs/${r.runId}`}>{shortId(r.runId)}</Link> ·{" "}
                  {r.barrierId ? <Link href={`/receipts/${r.barrierId}`}>receipt</Link> : "no stop covers it yet"}
                </div>
              </td>
              <td className="why">{r.whyUnknown ?? <span className="muted">not kept (resolved before the reason was recorded)</span>}</td>
              <td>
                <ReconciliationBadge value={r.status} />
                {r.status === "resolved" ? (
                  <div className="sub" data-resolution>
                    <strong>{r.resolution ? wordFor(RESOLUTION_WORDS, r.resolution) : "—"}</strong> · by{" "}
                    {data.labels[r.resolvedBy ?? ""] ?? r.resolvedBy ?? "?"}, <Time iso={r.resolvedAt} mode="relative" />
                  </div>
                ) : null}
              </td>
              <td>
                {r.assignee ? (
                  <>
                    {r.assignee.email}
                    {r.assignedAt ? (
                      <div className="sub">
                        by {data.labels[r.assignedBy ?? ""] ?? r.assignedBy}, <Time iso={r.assignedAt} mode="relative" />
                      </div>
                    ) : null}
                  </>
                ) : r.status === "resolved" ? (
                  <span className="muted">none (resolved without one)</span>
                ) : (
                  <span className="text-danger">nobody yet</span>
                )}
                {r.evidence ? (
                  <div className="sub evidence" title={r.evidence}>
                    “{r.evidence.length > 80 ? `${r.evidence.slice(0, 80)}…` : r.evidence}”
                  </div>
                ) : null}
              </td>
              <td>
                {r.status !== "resolved" && canAssign ? <AssignForm row={r} members={data.members} onFeedback={onFeedback} /> : null}
                {r.status !== "resolved" && (canResolveAny || r.assignee?.userId === me) ? (
                  <button type="button" className="btn btn-small btn-primary" onClick={() => setResolving(r)}>
                    Record outcome…
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <ResolveDialog row={resolving} onClose={() => setResolving(null)} onFeedback={onFeedback} />
    </section>
  );
}

function AssignForm({ row, members, onFeedback }: { row: Row; members: Members; onFeedback: (m: ToastMessage) => void }) {
  const client = useQueryClient();
  const [userId, setUserId] = useState(row.assignee?.userId ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!userId) {
      setError("choose a member");
      return;
    }
    setBusy(true);
    const r = await assignReconciliationAction({ reconciliationId: row.id, assigneeUserId: userId });
    setBusy(false);
    setError(r.ok ? null : r.message);
    if (!r.ok) return;
    const who = members.find((m) => m.id === userId);
    onFeedback({ ok: true, text: `Assigned ${opLabel(row)} to ${who ? `${who.name} (${who.email})` : userId}.` });
    await client.invalidateQueries();
  }
  return (
    <form onSubmit={submit} className="inline-form">
      <label className="sr-only" htmlFor={`assign-${row.id}`}>
        Assign to
      </label>
      <select id={`assign-${row.id}`} value={userId} onChange={(e) => setUserId(e.target.value)}>
        <option value="">Assign to…</option>
        {members.map((m) => (
          <option key={m.id} value={m.id}>
            {m.name} ({m.email})
          </option>
        ))}
      </select>
      <button type="submit" className="btn btn-small" disabled={busy || !userId || userId === row.assignee?.userId}>
        {row.assignee ? "Reassign" : "Assign"}
      </button>
      {error ? (
        <span className="text-danger small" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  );
}

function ResolveDialog({ row, onClose, onFeedback }: { row: Row | null; onClose: () => void; onFeedback: (m: ToastMessage) => void }) {
  const client = useQueryClient();
  const [resolution, setResolution] = useState<"effect_present" | "effect_absent" | "">("");
  const [evidence, setEvidence] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reset = useCallback(() => {
    setResolution("");
    setEvidence("");
    setError(null);
  }, []);
  const ref = useModal(!!row, reset);
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!row || !resolution) {
      setError("Choose what you found.");
      return;
    }
    setBusy(true);
    const r = await resolveReconciliationAction({ reconciliationId: row.id, resolution, evidence });
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    onFeedback({
      ok: true,
      text: `Recorded ${human(resolution)} for ${opLabel(row)}${row.barrierId ? "; the stop receipt is re-issued" : ""}.`,
    });
    await client.invalidateQueries();
    onClose();
  }
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="resolve-title" onClose={onClose} onCancel={onClose}>
      <form onSubmit={submit} className="stack">
        <h2 id="resolve-title">Record the outcome</h2>
        {row ? (
          <p>
            Operation <span className="mono">{row.tool}</span> ({row.operationId}) on <ProviderJob row={row} />.{" "}
            {row.providerJobUrl
              ? "Open the job on the provider, the authoritative system, and record what it shows."
              : "Check the authoritative system (this provider has no job page to link), then record what it shows."}
            {row.barrierId ? " The stop receipt is re-issued." : ""}
          </p>
        ) : null}
        <fieldset className="radios">
          <legend>What did you find?</legend>
          <label>
            <input
              type="radio"
              name="resolution"
              value="effect_absent"
              checked={resolution === "effect_absent"}
              onChange={() => setResolution("effect_absent")}
            />{" "}
            <strong>Effect absent</strong> — it did not happen
          </label>
          <label>
            <input
              type="radio"
              name="resolution"
              value="effect_present"
              checked={resolution === "effect_present"}
              onChange={() => setResolution("effect_present")}
            />{" "}
            <strong>Effect present</strong> — it happened (an effect receipt is recorded)
          </label>
        </fieldset>
        <label className="field">
          <span>Evidence (required: what you checked, where, what it showed)</span>
          <textarea rows={4} value={evidence} onChange={(e) => setEvidence(e.target.value)} required minLength={3} maxLength={4000} />
        </label>
        <FormError message={error} />
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !resolution || evidence.trim().length < 3}>
            {busy ? "Saving…" : "Record and re-issue receipt"}
          </button>
        </div>
      </form>
    </dialog>
  );
}
