"use client";
// Open work's unknown outcomes (components/open-work.tsx reads and filters them): each with its age and holder. Managers assign; the
// assignee (or a manager) records effect present / effect absent with evidence, which re-issues the
// stop receipt. Buttons appear only for those who may use them; the server checks again.
import Link from "next/link";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState, type FormEvent } from "react";
import { useModal } from "./use-modal";
import type { OpenWorkView } from "@/lib/modules/runs";
import { assignReconciliationAction, resolveReconciliationAction } from "@/app/(console)/(lists)/reconciliations/actions";
import { ReconciliationBadge } from "./badges";
import { DataTable } from "./data-table";
import { Time } from "./time";
import { EmptyState, FormError } from "./states";
import { shortId } from "./format";
import { RESOLUTION_WORDS, wordFor } from "@/lib/control/stop-words";

type Row = OpenWorkView["reconciliations"][number];
type Members = OpenWorkView["members"];

export function ReconciliationQueue({
  items,
  members,
  labels,
  status,
  overdueOnly,
  me,
  canAssign,
  canResolveAny,
}: {
  items: Row[];
  members: Members;
  labels: OpenWorkView["labels"];
  status: string;
  /** the age filter is "overdue": unknown outcomes have no due time, so none is listed */
  overdueOnly: boolean;
  me: string;
  canAssign: boolean;
  canResolveAny: boolean;
}) {
  const [resolving, setResolving] = useState<Row | null>(null);
  const data = { items, labels, members };
  return (
    <section aria-labelledby="recon-title" className="stack">
      <div className="page-head">
        <h2 id="recon-title">Unknown outcomes</h2>
        <p className="muted">
          Outcomes the barrier could not prove either way. Each needs a person to check the authoritative system and record what they found.
        </p>
      </div>
      {overdueOnly ? (
        <EmptyState title="No due time">Unknown outcomes have no due time; choose another age to see them.</EmptyState>
      ) : items.length === 0 ? (
        <EmptyState title={status === "open" ? "Nothing to reconcile" : "No reconciliations here"}>
          {status === "open" ? "No open unknown outcome matches. Unknown outcomes appear here with their age." : null}
        </EmptyState>
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
                  {r.providerName ?? "no provider"}
                  {r.providerJobId ? ` / ${r.providerJobId}` : ""} · run <Link href={`/runs/${r.runId}`}>{shortId(r.runId)}</Link> ·{" "}
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
                {r.status !== "resolved" && canAssign ? <AssignForm row={r} members={data.members} /> : null}
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
      <ResolveDialog row={resolving} onClose={() => setResolving(null)} />
    </section>
  );
}

function AssignForm({ row, members }: { row: Row; members: Members }) {
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
    if (r.ok) await client.invalidateQueries();
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

function ResolveDialog({ row, onClose }: { row: Row | null; onClose: () => void }) {
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
    await client.invalidateQueries();
    onClose();
  }
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="resolve-title" onClose={onClose} onCancel={onClose}>
      <form onSubmit={submit} className="stack">
        <h2 id="resolve-title">Record the outcome</h2>
        {row ? (
          <p>
            Operation <span className="mono">{row.tool}</span> ({row.operationId}) on {row.providerName ?? "its provider"}
            {row.providerJobId ? ` job ${row.providerJobId}` : ""}. Check the authoritative system, then record what it shows. The stop
            receipt is re-issued.
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
