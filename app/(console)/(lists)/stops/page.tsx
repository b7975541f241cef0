// Stops (docs/fleet-stop.md#stops-in-the-console): every single kill, fleet pause and fleet kill of the team, newest first.
import Link from "next/link";
import { requireSession } from "@/lib/modules/sessions";
import { listConsoleStops, type StopListItem } from "@/lib/modules/stop";
import { DataTable } from "@/components/data-table";
import { PersonName } from "@/components/person";
import { Time } from "@/components/time";
import { DECISION_WORDS } from "@/lib/control/stop-words";

export const metadata = { title: "Stops" };

const KIND_WORDS: Record<StopListItem["kind"], string> = { kill: "Kill", fleet_pause: "Fleet pause", fleet_kill: "Fleet kill" };

function Progress({ s }: { s: StopListItem }) {
  const p = s.progress;
  if (s.kind === "fleet_pause") return <>{s.liftedAt ? "lifted" : "holding every matching run"}</>;
  return (
    <>
      {p.targets} {p.targets === 1 ? "target" : "targets"}, barriers {p.started} started / {p.complete} with a receipt
      {p.unknownsOpen > 0 ? (
        <>
          ,{" "}
          <strong>
            {p.unknownsOpen} unknown{p.unknownsOpen === 1 ? "" : "s"} open
          </strong>
        </>
      ) : (
        ", no unknowns open"
      )}
    </>
  );
}

export default async function StopsPage() {
  const s = await requireSession();
  const stops = await listConsoleStops(s.principal);
  return (
    <section aria-labelledby="stops-title" className="stack">
      <div className="page-head">
        <h1 id="stops-title">Stops</h1>
        <p className="muted">Every kill, fleet pause and fleet kill of the team, newest first.</p>
      </div>
      {stops.length === 0 ? (
        <p className="empty">No stops yet: nobody has killed a run or paused a fleet.</p>
      ) : (
        <DataTable
          caption="Stops, newest first"
          scrollLabel="Stops (table)"
          columns={["Stop", "When", "Who", "Why", "Covers", "Progress", "Receipt"]}
        >
          {stops.map((st) => (
            <tr key={st.id} data-stop-id={st.id}>
              <td>
                <Link href={st.href}>{KIND_WORDS[st.kind]}</Link>
              </td>
              <td>
                <Time iso={st.at} mode="both" />
              </td>
              <td>
                <PersonName person={st.by} />
              </td>
              <td>{st.reason}</td>
              <td>
                {st.runId ? (
                  <>
                    run{" "}
                    <Link href={`/runs/${st.runId}`} className="mono">
                      {st.runId}
                    </Link>{" "}
                    and what it delegated
                  </>
                ) : (
                  st.covers
                )}
              </td>
              <td>
                <Progress s={st} />
              </td>
              <td>
                {st.receiptHref && st.decision ? (
                  <Link href={st.receiptHref}>{DECISION_WORDS[st.decision]}</Link>
                ) : st.kind === "fleet_pause" ? (
                  <span className="muted">none (a pause issues no receipt)</span>
                ) : (
                  <span className="muted">not yet issued</span>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
