"use client";
// The approval queue (docs/approvals-console.md): one card per call a policy rule holds until a person says yes,
// with its run tree, tool, redacted arguments, rule and a live countdown; approve or deny with a note. A card
// leaves when it is answered, expires or is voided (a pause or kill of its run), and shows up in "recent
// decisions" with what happened in words. Buttons only for who may answer (mayDecide); the server checks again.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import type { ApprovalView } from "@/lib/schemas/policy";
import { decideApprovalAction } from "@/app/(console)/approvals/actions";
import { ApprovalBadge } from "./badges";
import { DataTable } from "./data-table";
import { Term } from "./term";
import { Time, useNow } from "./time";
import { getJson } from "./providers";
import { EmptyState, ErrorNotice, FormError, LoadingBlock, StaleNotice } from "./states";
import { absTime, countdown, shortId } from "./format";
import { APPROVAL_STATE_WORDS, APPROVER_WORDS, VOID_CAUSE_WORDS } from "./words";

type List = { approvals: ApprovalView[] };
export const OPEN_URL = "/api/console/approvals?state=open";
export const DECIDED_URL = "/api/console/approvals?state=decided&limit=50";

const personName = (p: ApprovalView["decidedBy"]) => (p ? (p.name ?? p.email ?? p.userId) : "someone");

/** What happened to an approval, in words (the recent decisions list). */
export function outcomeWords(a: ApprovalView): string {
  switch (a.state) {
    case "approved":
      return `Approved by ${personName(a.decidedBy)}${a.usedAt ? "; the call then ran" : "; the call has not asked again yet"}`;
    case "denied":
      return `Denied by ${personName(a.decidedBy)}`;
    case "expired":
      return "Expired: nobody answered before the deadline";
    case "voided":
      return `Voided: ${a.voidCause ? (VOID_CAUSE_WORDS[a.voidCause] ?? a.voidCause.replaceAll("_", " ")) : "its run stopped"}`;
    default:
      return APPROVAL_STATE_WORDS[a.state] ?? a.state;
  }
}

export function ApprovalsQueue({ initialOpen, initialDecided }: { initialOpen: List; initialDecided: List }) {
  const open = useQuery({ queryKey: ["approvals", "open"], queryFn: () => getJson<List>(OPEN_URL), initialData: initialOpen });
  const decided = useQuery({ queryKey: ["approvals", "decided"], queryFn: () => getJson<List>(DECIDED_URL), initialData: initialDecided });
  const [feedback, setFeedback] = useState<ReactNode>(null);
  const now = useNow();
  // A card past its deadline goes at once (the gate already answers approval_expired); the next poll confirms it.
  const cards = (open.data?.approvals ?? []).filter((a) => now === null || Date.parse(a.expiresAt) > now);
  return (
    <section aria-labelledby="approvals-title">
      <div className="page-head">
        <h1 id="approvals-title">Approvals</h1>
        <p className="muted">
          Calls a policy rule holds until a person says yes. Each <Term id="approval">approval</Term> admits exactly that call, before its
          deadline; a pause or kill of its run voids it.
        </p>
      </div>
      <div role="status" aria-live="polite" className="approval-feedback">
        {feedback ? <div className="notice notice-ok">{feedback}</div> : null}
      </div>
      <h2 id="waiting-title">
        Waiting for an answer <span className="muted">({cards.length})</span>
      </h2>
      {open.isError && open.data ? <StaleNotice error={open.error} /> : null}
      {!open.data && open.isPending ? <LoadingBlock label="Loading approvals" /> : null}
      {!open.data && open.isError ? <ErrorNotice message={open.error.message} retry={() => open.refetch()} /> : null}
      {open.data && cards.length === 0 ? (
        <EmptyState title="Nothing waiting">Calls held for approval appear here with their deadline, live.</EmptyState>
      ) : null}
      {cards.length > 0 ? (
        <ul className="plain-list approval-cards" aria-labelledby="waiting-title">
          {cards.map((a) => (
            <li key={a.id}>
              <ApprovalCard a={a} onAnswered={setFeedback} />
            </li>
          ))}
        </ul>
      ) : null}
      <RecentDecisions q={decided} />
    </section>
  );
}

function RunTree({ a }: { a: ApprovalView }) {
  const path = a.runPath.length > 0 ? a.runPath : [a.runId];
  return (
    <ol className="run-path" aria-label="Run tree, root first">
      {path.map((id, i) => (
        <li key={id}>
          <Link href={`/runs/${id}`} title={id}>
            {i === path.length - 1 && a.runTitle ? a.runTitle : i === 0 ? `root ${shortId(id)}` : shortId(id)}
          </Link>
        </li>
      ))}
    </ol>
  );
}

function Countdown({ expiresAt }: { expiresAt: string }) {
  const now = useNow();
  if (now === null)
    return (
      <span className="countdown">
        answer by <time dateTime={expiresAt}>{absTime(expiresAt)}</time>
      </span>
    );
  const left = Date.parse(expiresAt) - now;
  return (
    <span className={`countdown${left < 60_000 ? " text-danger" : ""}`} title={`deadline ${absTime(expiresAt)}`}>
      <span className="sr-only">time left to answer: </span>
      <time dateTime={expiresAt} data-countdown>
        {countdown(left)}
      </time>{" "}
      left
    </span>
  );
}

function ApprovalCard({ a, onAnswered }: { a: ApprovalView; onAnswered: (said: ReactNode) => void }) {
  const client = useQueryClient();
  const router = useRouter();
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState<"approve" | "deny" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const titleId = `approval-${a.id}`;
  async function answer(decision: "approve" | "deny") {
    setBusy(decision);
    setError(null);
    const r = await decideApprovalAction({ approvalId: a.id, decision, ...(note.trim() ? { note: note.trim() } : {}) }).catch(
      (e: unknown) => ({ ok: false as const, message: `no answer from the control plane (${e instanceof Error ? e.message : String(e)})` }),
    );
    setBusy(null);
    if (r.ok) {
      // The tool is a name as the agent wrote it: shown as code, like everywhere on the page.
      onAnswered(
        decision === "approve" ? (
          <>
            Approved <code>{a.tool}</code> on {a.runTitle ?? a.runId}: the agent&rsquo;s next ask of the gate for this call is allowed.
          </>
        ) : (
          <>
            Denied <code>{a.tool}</code> on {a.runTitle ?? a.runId}: the gate denies this call (approval denied).
          </>
        ),
      );
      router.refresh(); // the navigation's count
    } else setError(`Not answered: ${r.message}`);
    await client.invalidateQueries({ queryKey: ["approvals"] });
  }
  return (
    <article className="card approval-card" data-approval={a.id} aria-labelledby={titleId}>
      <div className="card-head">
        <h3 id={titleId} className="wrap-any">
          <code>{a.tool}</code>
        </h3>
        <Countdown expiresAt={a.expiresAt} />
      </div>
      <dl className="approval-facts">
        <div>
          <dt>Run tree</dt>
          <dd>
            <RunTree a={a} />
          </dd>
        </div>
        <div>
          <dt>Rule</dt>
          <dd>
            <code>{a.ruleName}</code> <span className="muted">(policy version {a.policyVersion})</span>
          </dd>
        </div>
        <div>
          <dt>Who may answer</dt>
          <dd>
            {APPROVER_WORDS[a.approvers.role]}
            {a.approvers.users.length > 0 ? `, or ${a.approvers.users.map((u) => u.email ?? u.userId).join(", ")}` : ""}
          </dd>
        </div>
        <div>
          <dt>Asked</dt>
          <dd>
            <Time iso={a.createdAt} mode="relative" /> <span className="mono sub wrap-any">{a.operationId}</span>
          </dd>
        </div>
      </dl>
      <div className="approval-args-label">Arguments (keys the policy redacts are hidden)</div>
      <pre className="json approval-args" aria-label={`Arguments of ${a.tool}`}>
        {a.arguments === null ? "none sent" : JSON.stringify(a.arguments, null, 2)}
      </pre>
      {a.mayDecide ? (
        <div className="stack approval-answer">
          <label className="field">
            <span>Note (optional, recorded with your answer)</span>
            <textarea rows={2} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} disabled={busy !== null} />
          </label>
          <FormError message={error} />
          <div className="controls">
            <button type="button" className="btn btn-primary" disabled={busy !== null} onClick={() => answer("approve")}>
              {busy === "approve" ? "Approving…" : "Approve"}
            </button>
            <button type="button" className="btn btn-danger" disabled={busy !== null} onClick={() => answer("deny")}>
              {busy === "deny" ? "Denying…" : "Deny"}
            </button>
          </div>
        </div>
      ) : (
        <p className="muted small">
          Only {APPROVER_WORDS[a.approvers.role]}
          {a.approvers.users.length > 0 ? " or the people named above" : ""} may answer this one, and never the person whose key holds the
          run.
        </p>
      )}
    </article>
  );
}

function RecentDecisions({ q }: { q: UseQueryResult<List> }) {
  const rows = q.data?.approvals ?? [];
  return (
    <section aria-labelledby="decided-title" className="approval-decided">
      <h2 id="decided-title">Recent decisions</h2>
      {q.isError && q.data ? <StaleNotice error={q.error} /> : null}
      {!q.data && q.isError ? <ErrorNotice message={q.error.message} retry={() => q.refetch()} /> : null}
      {q.data && rows.length === 0 ? <EmptyState title="No decisions yet" /> : null}
      {rows.length > 0 ? (
        <DataTable scrollLabel="Recent decisions (table)" columns={["When", "Call", "Outcome", "Note"]}>
          {rows.map((a) => (
            <tr key={a.id} data-decided={a.id} data-state={a.state}>
              <td>
                <Time iso={a.voidedAt ?? a.decidedAt ?? a.expiresAt} mode="relative" />
              </td>
              <td>
                <code>{a.tool}</code>
                <div className="sub">
                  run <Link href={`/runs/${a.runId}`}>{a.runTitle ?? shortId(a.runId)}</Link> · rule <code>{a.ruleName}</code>
                </div>
              </td>
              <td>
                <ApprovalBadge value={a.state} />
                <div className="sub" data-outcome>
                  {a.state === "voided" ? (
                    <>
                      <Term id="voided">Voided</Term>: {outcomeWords(a).replace(/^Voided: /, "")}
                    </>
                  ) : (
                    outcomeWords(a)
                  )}
                </div>
              </td>
              <td className="why">{a.note ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
