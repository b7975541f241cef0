"use client";
// A fleet stop, live (docs/fleet-stop.md): matched, dispatch stopped, barriers started / with a receipt,
// not yet quiet, open reconciliations, then the fleet receipt. Polls until the receipt is issued
// (a pause scope has no receipt: it shows whether dispatch is still stopped).
import Link from "next/link";
import { useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { liftStopAction } from "@/app/(console)/stops/actions";
import { DECISION_WORDS, PHASE_WORDS, stopFilterWords, wordFor } from "@/lib/control/stop-words";
import { PersonName, type PersonLike } from "./person";
import { ReasonDialog } from "./reason-dialog";
import type { StopView } from "@/lib/schemas/stops";
import { getJson } from "./providers";
import { DataTable } from "./data-table";
import { ErrorNotice, StaleNotice } from "./states";
import { Time } from "./time";
import { shortId } from "./format";

export function FleetStopView({ initial, by, canLift }: { initial: StopView; by: PersonLike; canLift: boolean }) {
  const client = useQueryClient();
  const [lifting, setLifting] = useState(false);
  const liftButton = useRef<HTMLButtonElement>(null);
  const query = useQuery({
    queryKey: ["stop", initial.stopId],
    queryFn: () => getJson<StopView>(`/api/console/stops/${initial.stopId}`),
    initialData: initial,
    refetchInterval: (q) => (q.state.data?.receipt || q.state.data?.action === "pause" ? false : 1000),
  });
  const s = query.data;
  if (!s) return <ErrorNotice message="This fleet stop could not be read." retry={() => query.refetch()} />;
  const b = s.barriers;
  const filter = stopFilterWords(s.filter);
  const closeLift = () => {
    setLifting(false);
    liftButton.current?.focus();
  };
  return (
    <section aria-labelledby="stop-title" className="stack">
      <div className="page-head">
        <h1 id="stop-title">
          Fleet {s.action === "kill" ? "kill" : "pause"} <span className="mono">{shortId(s.stopId)}</span>
        </h1>
        <p className="muted">
          “{s.reason}” — by <PersonName person={by} />, <Time iso={s.createdAt} />
        </p>
        <p>
          <Link href="/stops">All stops</Link>
        </p>
      </div>
      {query.isError ? <StaleNotice error={query.error} /> : null}
      <dl className="facts" aria-label="Progress">
        <div>
          <dt>Covers</dt>
          <dd data-testid="stop-filter">{filter}</dd>
        </div>
        <div>
          <dt>Matched</dt>
          <dd data-testid="stop-matched">{s.matched}</dd>
        </div>
        <div>
          <dt>Dispatch</dt>
          <dd data-testid="stop-dispatch">
            {s.dispatchStopped ? (
              s.action === "pause" ? (
                "held: every matching run's next call waits"
              ) : (
                "denied: every matching run's next call is refused"
              )
            ) : (
              <>
                lifted <Time iso={s.liftedAt} />
              </>
            )}
          </dd>
        </div>
        {s.action === "kill" ? (
          <>
            <div>
              <dt>Receipts issued</dt>
              <dd data-testid="stop-complete">
                {b.complete} of {b.total} ({b.started} started)
              </dd>
            </div>
            <div>
              <dt>Not yet quiet</dt>
              <dd>{b.stopIncomplete}</dd>
            </div>
            <div>
              <dt>Failed to start</dt>
              <dd>{b.failed}</dd>
            </div>
            <div>
              <dt>Unknowns open</dt>
              <dd>{s.openReconciliations}</dd>
            </div>
          </>
        ) : null}
      </dl>
      {s.action === "kill" ? (
        s.receipt ? (
          <div
            className={`notice ${s.receipt.decision === "stopped_and_quiet" ? "notice-ok" : "notice-error"}`}
            role="status"
            data-testid="fleet-receipt"
            id="fleet-receipt"
          >
            Fleet receipt: <strong>{DECISION_WORDS[s.receipt.decision]}</strong>, issued <Time iso={s.receipt.issuedAt} />.
            <div className="mono sub" title="sha256 of the fleet receipt's canonical text">
              digest sha256:{s.receipt.digest}
            </div>
          </div>
        ) : (
          <p role="status" aria-live="polite">
            Waiting for every barrier&rsquo;s receipt…
          </p>
        )
      ) : null}
      {s.action === "pause" && s.dispatchStopped && canLift ? (
        <div>
          <button ref={liftButton} type="button" className="btn" onClick={() => setLifting(true)}>
            Lift this pause…
          </button>
          <ReasonDialog
            open={lifting}
            title="Lift this fleet pause"
            confirmLabel="Lift the pause"
            onCancel={closeLift}
            onConfirm={async (reason) => {
              const r = await liftStopAction({ stopId: s.stopId, reason });
              if (!r.ok) return r.message;
              await client.invalidateQueries();
              closeLift();
              return null;
            }}
          >
            <p>Every run it holds ({filter}) is decided afresh on its next call; a run paused on its own stays paused.</p>
          </ReasonDialog>
        </div>
      ) : null}
      {s.runs.length > 0 ? (
        <DataTable
          caption="Barriers of this fleet stop"
          scrollLabel="Barriers of this fleet stop (table)"
          columns={["Run", "Barrier", "Phase", "Receipt"]}
        >
          {s.runs.map((r) => (
            <tr key={r.runId}>
              <td>
                <Link href={`/runs/${r.runId}`} className="mono">
                  {shortId(r.runId)}
                </Link>
              </td>
              <td>
                {r.barrierId ? (
                  <Link href={`/barriers/${r.barrierId}`} className="mono">
                    {shortId(r.barrierId)}
                  </Link>
                ) : r.error ? (
                  <span className="notice-error">{r.error}</span>
                ) : (
                  "starting…"
                )}
              </td>
              <td>{r.phase ? wordFor(PHASE_WORDS, r.phase) : "—"}</td>
              <td>{r.decision && r.barrierId ? <Link href={`/receipts/${r.barrierId}`}>{DECISION_WORDS[r.decision]}</Link> : "—"}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
