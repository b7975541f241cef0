"use client";
// Recovery items (docs/evidence.md#recovery): effects a stop found completed, with their owner and due time.
// The owner (or a manager) starts the provider's compensation — rolled back only on the provider's own
// check — or records what a person did; managers assign. Buttons appear only for those who may use them;
// the server checks again. Each action's result is reported by the page's toast.
import Link from "next/link";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState, type FormEvent } from "react";
import { useModal } from "./use-modal";
import type { RecoveryView } from "@/lib/schemas/recovery";
import type { Member } from "@/lib/modules/stop";
import { assignRecoveryAction, recordRecoveryAction, startRecoveryAction } from "@/app/(console)/(lists)/reconciliations/actions";
import { openWorkEmpty, type OpenWorkCounts, type OpenWorkEmptyFilter } from "@/lib/control/open-work";
import { DataTable } from "./data-table";
import { RecoveryBadge } from "./badges";
import { Time } from "./time";
import { EmptyState, FormError, type ToastMessage } from "./states";
import { human, shortId } from "./format";

const STATE_WORDS: Record<RecoveryView["state"], string> = {
  open: "open",
  in_progress: "in progress",
  rolled_back: "rolled back",
  accepted: "accepted",
  failed: "failed",
};

export function RecoveryQueue({
  items,
  members,
  counts,
  filter,
  me,
  canAssign,
  canActOnAny,
  onFeedback,
}: {
  items: RecoveryView[];
  members: Member[];
  /** the team's counts, whatever the filters: what an empty list says the filters hide */
  counts: OpenWorkCounts;
  filter: OpenWorkEmptyFilter;
  me: string;
  canAssign: boolean;
  canActOnAny: boolean;
  onFeedback: (m: ToastMessage) => void;
}) {
  const client = useQueryClient();
  // Open work re-reads its lists and counts (and, when the total moved, the navigation's badge).
  const refresh = () => void client.invalidateQueries();
  const [recording, setRecording] = useState<RecoveryView | null>(null);
  const empty = items.length === 0 ? openWorkEmpty("recoveries", filter, counts) : null;
  const [busy, setBusy] = useState<string | null>(null);
  const mayAct = (r: RecoveryView) => canActOnAny || r.assignee?.userId === me;
  async function start(r: RecoveryView) {
    setBusy(r.id);
    const res = await startRecoveryAction({ recoveryId: r.id });
    setBusy(null);
    onFeedback(
      res.ok
        ? {
            ok: res.data.state === "rolled_back",
            text:
              res.data.state === "rolled_back"
                ? `${r.tool} (${r.operationId}): rolled back — ${r.providerName} reports the effect absent.`
                : `${r.tool} (${r.operationId}): ${STATE_WORDS[res.data.state as RecoveryView["state"]]} — ${r.providerName} has not shown the effect gone.`,
          }
        : { ok: false, text: res.message },
    );
    refresh();
  }
  return (
    <section aria-labelledby="recovery-title" className="stack">
      <div className="page-head">
        <h2 id="recovery-title">Recovery items</h2>
        <p className="muted">
          Effects a stop found completed. Each has an owner until it is rolled back (proven by the provider&apos;s own check, or recorded by
          a person) or accepted.
        </p>
      </div>
      {empty ? (
        <div data-empty="recoveries">
          <EmptyState title={empty.title}>{empty.body || null}</EmptyState>
        </div>
      ) : (
        <DataTable
          scrollLabel="Recovery items (table)"
          caption="Recovery items, soonest due first"
          columns={["Operation", "Provider", "Rollback owner", "Owner", "State", "Due", "Actions"]}
        >
          {items.map((r) => (
            <tr key={r.id} data-recovery-id={r.id} data-overdue={r.overdue ? "" : undefined}>
              <td>
                <span className="mono">{r.tool}</span>
                <div className="muted small">
                  {r.operationId} · <Link href={`/receipts/${r.barrierId}`}>receipt</Link> · run{" "}
                  <Link href={`/runs/${r.runId}`}>{shortId(r.runId)}</Link>
                </div>
              </td>
              <td>
                {r.providerName ?? "—"}
                {r.providerJobId ? <div className="muted small mono">{r.providerJobId}</div> : null}
              </td>
              <td>{r.rollbackOwner ?? "—"}</td>
              <td>
                {r.assignee ? (
                  <span data-user-id={r.assignee.userId}>
                    {r.assignee.name} <span className="muted small">{r.assignee.email}</span>
                  </span>
                ) : (
                  "nobody"
                )}
              </td>
              <td>
                <RecoveryBadge value={r.state} />
                {r.settledBy ? (
                  <div className="muted small">{r.settledBy === "provider" ? `verified by ${r.providerName}` : `recorded by a person`}</div>
                ) : null}
              </td>
              <td>
                <Time iso={r.dueAt} />
                {r.overdue ? <div className="tag tag-warn">overdue</div> : null}
              </td>
              <td>
                <div className="inline-form">
                  {mayAct(r) && r.compensable && (r.state === "open" || r.state === "failed" || r.state === "in_progress") ? (
                    <button type="button" className="btn btn-small btn-primary" disabled={busy === r.id} onClick={() => start(r)}>
                      {busy === r.id ? "Asking the provider…" : "Start recovery"}
                    </button>
                  ) : null}
                  {mayAct(r) && (r.state === "open" || r.state === "failed" || r.state === "in_progress") ? (
                    <button type="button" className="btn btn-small" onClick={() => setRecording(r)}>
                      Record what was done
                    </button>
                  ) : null}
                  {canAssign && r.state !== "rolled_back" && r.state !== "accepted" ? (
                    <AssignRecovery row={r} members={members} onDone={(text) => (onFeedback({ ok: true, text }), refresh())} />
                  ) : null}
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <RecordDialog
        row={recording}
        onClose={(text) => {
          setRecording(null);
          if (text) {
            onFeedback({ ok: true, text });
            refresh();
          }
        }}
      />
    </section>
  );
}

function AssignRecovery({ row, members, onDone }: { row: RecoveryView; members: Member[]; onDone: (text: string) => void }) {
  const [userId, setUserId] = useState(row.assignee?.userId ?? "");
  const [error, setError] = useState<string | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await assignRecoveryAction({ recoveryId: row.id, assigneeUserId: userId });
    setError(r.ok ? null : r.message);
    if (r.ok) onDone(`${row.operationId}: assigned to ${members.find((m) => m.id === userId)?.name ?? userId}.`);
  }
  return (
    <form onSubmit={submit} className="inline-form">
      <label className="sr-only" htmlFor={`assign-recovery-${row.id}`}>
        Assign recovery to
      </label>
      <select id={`assign-recovery-${row.id}`} value={userId} onChange={(e) => setUserId(e.target.value)}>
        {members.map((m) => (
          <option key={m.id} value={m.id}>
            {m.name} ({m.email})
          </option>
        ))}
      </select>
      <button type="submit" className="btn btn-small" disabled={!userId || userId === row.assignee?.userId}>
        Assign
      </button>
      {error ? (
        <span className="small" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  );
}

function RecordDialog({ row, onClose }: { row: RecoveryView | null; onClose: (text: string | null) => void }) {
  const [state, setState] = useState<"rolled_back" | "accepted" | "failed" | "in_progress">("rolled_back");
  const [note, setNote] = useState("");
  const [evidence, setEvidence] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reset = useCallback(() => {
    setState("rolled_back");
    setNote("");
    setEvidence("");
    setError(null);
  }, []);
  const ref = useModal(!!row, reset);
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!row) return;
    setBusy(true);
    const r = await recordRecoveryAction({ recoveryId: row.id, state, note, evidence });
    setBusy(false);
    if (!r.ok) return setError(r.message);
    onClose(`${row.operationId}: recorded as ${human(state)}.`);
  }
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby="record-recovery-title"
      onClose={() => onClose(null)}
      onCancel={() => onClose(null)}
    >
      <form onSubmit={submit} className="stack">
        <h2 id="record-recovery-title">Record what was done</h2>
        {row ? (
          <p>
            <span className="mono">{row.tool}</span> ({row.operationId}) on {row.providerName ?? "its provider"}. The receipt will say a
            person recorded this, with your note and evidence.
          </p>
        ) : null}
        <fieldset className="radios">
          <legend>Outcome</legend>
          {(["rolled_back", "accepted", "failed", "in_progress"] as const).map((s) => (
            <label key={s}>
              <input type="radio" name="recovery-state" value={s} checked={state === s} onChange={() => setState(s)} /> {STATE_WORDS[s]}
            </label>
          ))}
        </fieldset>
        <label className="field">
          <span>What was done</span>
          <textarea rows={3} value={note} onChange={(e) => setNote(e.target.value)} required maxLength={4000} />
        </label>
        <label className="field">
          <span>Evidence (a link, a ticket, a command&apos;s output)</span>
          <textarea rows={3} value={evidence} onChange={(e) => setEvidence(e.target.value)} required maxLength={4000} />
        </label>
        <FormError message={error} />
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onClose(null)} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !note.trim() || !evidence.trim()}>
            {busy ? "Saving…" : "Record and re-issue receipt"}
          </button>
        </div>
      </form>
    </dialog>
  );
}
