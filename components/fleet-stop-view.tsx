"use client";
// A fleet stop, live (docs/fleet-stop.md): matched, dispatch stopped, barriers started / complete,
// stop_incomplete, open reconciliations, then the fleet receipt. Polls until the receipt is issued
// (a pause scope has no receipt: it shows whether dispatch is still stopped).
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import type { StopView } from "@/lib/schemas/stops";
import { getJson } from "./providers";
import { DataTable } from "./data-table";
import { ErrorNotice, StaleNotice } from "./states";
import { Time } from "./time";
import { shortId } from "./format";

export function FleetStopView({ initial }: { initial: StopView }) {
  const query = useQuery({
    queryKey: ["stop", initial.stopId],
    queryFn: () => getJson<StopView>(`/api/console/stops/${initial.stopId}`),
    initialData: initial,
    refetchInterval: (q) => (q.state.data?.receipt || q.state.data?.action === "pause" ? false : 1000),
  });
  const s = query.data;
  if (!s) return <ErrorNotice message="This fleet stop could not be read." retry={() => query.refetch()} />;
  const b = s.barriers;
  const filter = Object.keys(s.filter).length === 0 ? "the whole team" : JSON.stringify(s.filter);
  return (
    <section aria-labelledby="stop-title" className="stack">
      <div className="page-head">
        <h1 id="stop-title">
          Fleet {s.action === "kill" ? "kill" : "pause"} <span className="mono">{shortId(s.stopId)}</span>
        </h1>
        <p className="muted">
          {s.reason} — by {s.requestedBy}, <Time iso={s.createdAt} mode="relative" />
        </p>
      </div>
      {query.isError ? <StaleNotice error={query.error} /> : null}
      <dl className="facts" aria-label="Progress">
        <div>
          <dt>Filter</dt>
          <dd className="mono">{filter}</dd>
        </div>
        <div>
          <dt>Matched</dt>
          <dd data-testid="stop-matched">{s.matched}</dd>
        </div>
        <div>
          <dt>Dispatch</dt>
          <dd data-testid="stop-dispatch">{s.dispatchStopped ? "stopped" : `resumed ${s.liftedAt ?? ""}`}</dd>
        </div>
        {s.action === "kill" ? (
          <>
            <div>
              <dt>Barriers complete</dt>
              <dd data-testid="stop-complete">
                {b.complete} of {b.total} ({b.started} started)
              </dd>
            </div>
            <div>
              <dt>stop_incomplete</dt>
              <dd>{b.stopIncomplete}</dd>
            </div>
            <div>
              <dt>Failed to start</dt>
              <dd>{b.failed}</dd>
            </div>
            <div>
              <dt>Open reconciliations</dt>
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
          >
            Fleet receipt: <strong>{s.receipt.decision}</strong>, issued <Time iso={s.receipt.issuedAt} mode="relative" />.
            <div className="mono sub">sha256:{s.receipt.digest}</div>
          </div>
        ) : (
          <p role="status" aria-live="polite">
            Waiting for every barrier&rsquo;s receipt…
          </p>
        )
      ) : null}
      {s.runs.length > 0 ? (
        <DataTable caption="Barriers of this fleet stop" columns={["Run", "Barrier", "Phase", "Receipt"]}>
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
              <td>{r.phase ?? "—"}</td>
              <td>{r.decision && r.barrierId ? <Link href={`/receipts/${r.barrierId}`}>{r.decision}</Link> : "—"}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
