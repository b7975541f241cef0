"use client";
// The barrier page, live: phase, counts, the stop ladder, and every settlement with why it settled as
// it did. With ?follow=1 (right after a kill) it moves on to the receipt the moment one is issued.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { useEffect, type ReactNode } from "react";
import type { BarrierView as BarrierViewData } from "@/lib/modules/runs";
import type { Settlement } from "@/lib/schemas/barriers";
import { PhaseBadge, ReceiptDecisionBadge, ReconciliationBadge, SettledBadge } from "./badges";
import { DataTable } from "./data-table";
import { Term } from "./term";
import { Time } from "./time";
import { getJson } from "./providers";
import { EmptyState, StaleNotice } from "./states";
import { human, shortId } from "./format";
import { Ladder } from "./ladder";
import { barrierHeading, RESOLUTION_WORDS, wordFor } from "@/lib/control/stop-words";

export function BarrierView({ initial, follow }: { initial: BarrierViewData; follow: boolean }) {
  const router = useRouter();
  const q = useQuery({
    queryKey: ["barrier", initial.id],
    queryFn: () => getJson<BarrierViewData>(`/api/console/barriers/${initial.id}`),
    initialData: initial,
    refetchInterval: (query) => (query.state.data?.phase === "complete" ? 10_000 : 1500),
  });
  const b = q.data;
  const issued = b.receipts.length > 0;
  useEffect(() => {
    if (follow && issued) router.replace(`/receipts/${b.id}`);
  }, [follow, issued, b.id, router]);
  const c = b.counts;
  return (
    <article aria-labelledby="barrier-title">
      <StaleNotice error={q.isError ? q.error : null} />
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link href="/runs">Runs</Link> / <Link href={`/runs/${b.runId}`}>{b.runTitle ?? shortId(b.runId)}</Link> / barrier
      </nav>
      <header className="run-head">
        <div>
          <h1 id="barrier-title">
            {barrierHeading(b.phase, b.decision)} <span className="mono muted small">{b.id}</span>
          </h1>
          <div className="meta">
            <span>
              run{" "}
              <Link href={`/runs/${b.runId}`} className="mono">
                {b.runId}
              </Link>
            </span>
            <span>
              requested <Time iso={b.requestedAt} /> by {b.labels[b.requestedBy] ?? b.requestedBy}
            </span>
            <span>
              new <Term id="epoch">epoch</Term> {b.newEpoch}
            </span>
          </div>
          <p className="reason">“{b.reason}”</p>
          <div className="state-row">
            <PhaseBadge value={b.phase} />
            {b.decision ? <ReceiptDecisionBadge value={b.decision} /> : null}
            {b.quietUntil && b.phase !== "complete" ? (
              <span className="state-why">
                <Term id="quiet-period">quiet period</Term> until <Time iso={b.quietUntil} />
              </span>
            ) : null}
          </div>
        </div>
        <div className="controls">
          {issued ? (
            <Link className="btn btn-primary" href={`/receipts/${b.id}`}>
              Open stop receipt{b.receipts.length > 1 ? ` (v${b.receipts[0]!.version})` : ""}
            </Link>
          ) : (
            <span className="muted" role="status">
              {follow
                ? "Following the barrier — the receipt opens when it is issued."
                : "The receipt is issued when the quiet period ends."}
            </span>
          )}
        </div>
      </header>

      <section aria-label="Counts" className="stats">
        <Stat label="runs killed" value={c.runsKilled} />
        <Stat
          label={
            <>
              <Term id="lease">leases</Term> revoked
            </>
          }
          value={c.leasesRevoked}
        />
        <Stat label="queued cancelled" value={c.queuedCancelled} />
        <Stat label="scheduled cancelled" value={c.scheduledCancelled} />
        <Stat label="retries cancelled" value={c.retriesCancelled} />
        <Stat label="in flight (subtree)" value={c.inFlight} />
        <Stat label={<Term id="late-requests-denied">late requests denied</Term>} value={c.lateRequestsDenied} />
      </section>

      <section aria-labelledby="ladder-title" className={`card ${b.phase === "complete" ? "" : "barrier-live"}`}>
        <h2 id="ladder-title">Stop ladder</h2>
        <Ladder rungs={b.ladder} startedAt={b.requestedAt} />
        <ul className="plain-list small" aria-label="What the evidence shows">
          {b.sentences.map((x, i) => (
            <li key={i}>{x}</li>
          ))}
        </ul>
      </section>

      <section aria-labelledby="settlements-title" className="card">
        <h2 id="settlements-title">
          Settlements <span className="muted">({b.settlements.length})</span>
        </h2>
        {b.settlements.length === 0 ? (
          <EmptyState title="Nothing was in flight">
            No call of the subtree was running or unknown, so there was nothing to settle.
          </EmptyState>
        ) : (
          <DataTable
            scrollLabel="Settlements (table)"
            className="table compact"
            columns={["Operation", "Provider", "Cancel", "Effect expected / observed", "Settled", "Why", "Reconciliation"]}
          >
            {b.settlements.map((s) => (
              <tr key={s.operationId}>
                <td>
                  <span className="mono">{s.tool}</span>
                  <div className="sub mono" title={s.operationId}>
                    {s.operationId.length > 26 ? `${s.operationId.slice(0, 26)}…` : s.operationId}
                  </div>
                </td>
                <td className="mono wrap-any">
                  {s.provider ?? "—"}
                  {s.providerJobId ? <div className="sub">{s.providerJobId}</div> : null}
                </td>
                <td>
                  {s.providerResponse ? human(s.providerResponse) : s.cancelRequestedAt ? "requested" : "—"}
                  <div className="sub">{s.cancelRequestedAt ? <Time iso={s.cancelRequestedAt} mode="absolute" /> : null}</div>
                </td>
                <td>
                  {human(s.effectExpected)} / {human(s.effectObserved)}
                  <div className="sub">
                    {s.effectCheckedAt ? (
                      <>
                        checked <Time iso={s.effectCheckedAt} mode="absolute" />
                      </>
                    ) : s.attempts ? (
                      `${s.attempts} attempts`
                    ) : null}
                  </div>
                </td>
                <td>
                  <SettledBadge value={SETTLED_AS[s.outcome]} />
                  {s.settledBy ? <div className="sub">by {s.settledBy}</div> : null}
                </td>
                <td className="why">{settledWhy(s)}</td>
                <td>
                  {s.reconciliation ? (
                    <>
                      <ReconciliationBadge value={s.reconciliation.status} />
                      <div className="sub">
                        {s.reconciliation.assignee ?? "no owner"}
                        {s.reconciliation.resolution ? ` · ${wordFor(RESOLUTION_WORDS, s.reconciliation.resolution)}` : ""}
                        {s.reconciliation.resolvedBy ? ` · by ${s.reconciliation.resolvedBy}` : ""}
                      </div>
                    </>
                  ) : (
                    "—"
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>

      {b.receipts.length > 0 ? (
        <section aria-labelledby="receipts-title" className="card">
          <h2 id="receipts-title">Receipt versions</h2>
          <ul className="plain-list">
            {b.receipts.map((r) => (
              <li key={r.version}>
                <Link href={`/receipts/${b.id}?version=${r.version}`}>version {r.version}</Link> <ReceiptDecisionBadge value={r.decision} />{" "}
                issued <Time iso={r.verifiedAt} /> <span className="mono muted small">sha256 {r.digest.slice(0, 16)}…</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </article>
  );
}

/** The settled state the outcome amounts to (null: still settling). */
const SETTLED_AS: Record<Settlement["outcome"], string | null> = {
  pending: null,
  unknown: "unknown",
  effect_present: "completed_and_verified",
  effect_absent: "cancelled_without_effect",
  not_started: "cancelled_without_effect",
};

/** Why it settled as it did; an unknown in the words the evidence sentences and the open-work queue use. */
function settledWhy(s: BarrierViewData["settlements"][number]): string {
  if (s.outcome === "unknown" && s.whyUnknown) return s.whyUnknown;
  if (s.settledReason) return s.settledReason;
  return s.lastError ? `last error: ${s.lastError}` : "—";
}

function Stat({ label, value }: { label: ReactNode; value: number }) {
  return (
    <div className="stat">
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}
