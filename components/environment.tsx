// The environment of a run (docs/environment.md): on the run page, whether a supervisor holds it, by
// which mechanism, its live process count and frozen state from the latest report, and after a stop the
// processes it ended; in a receipt, what each run's supervisor proved — and, for a run without one, that
// nothing is claimed. Only what the report or the receipt says is shown.
import type { ReactNode } from "react";
import type { RunView } from "@/lib/modules/runs";
import { human } from "./format";
import { Time } from "./time";
import { DataTable } from "./data-table";

type Env = NonNullable<RunView["environment"]>;
type Proc = { pid: number; command: string; ended: string; endedAt?: string | null; ended_at?: string | null };

const ENDED: Record<string, string> = {
  exited: "exited on its own, before the stop",
  after_sigterm: "ended after SIGTERM",
  after_sigkill: "ended after SIGKILL",
  not_ended: "not ended (still alive)",
};

const at = (iso: string | null | undefined): ReactNode => <Time iso={iso} mode="absolute" />;

function ProcessTable({ processes, label }: { processes: Proc[]; label: string }) {
  return (
    <DataTable scrollLabel={label} className="table compact" columns={["PID", "Command", "How it ended", "Ended at"]}>
      {processes.map((p) => (
        <tr key={`${p.pid}-${p.command}`}>
          <td className="mono num">{p.pid}</td>
          <td className="mono">{p.command}</td>
          <td className={p.ended === "not_ended" ? "text-danger" : undefined}>{ENDED[p.ended] ?? human(p.ended)}</td>
          <td>{at(p.endedAt ?? p.ended_at)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The run page's environment card. */
export function RunEnvironmentPanel({ env, labels = {} }: { env: Env | null; labels?: Record<string, string> }) {
  return (
    <section aria-labelledby="environment-title" className="card">
      <h2 id="environment-title">Environment</h2>
      {!env ? (
        <p className="muted">
          Not supervised: this run has no supervisor (<code>quiesce exec</code>), so nothing is known or claimed about its processes.
        </p>
      ) : (
        <>
          <dl className="fields">
            <div className="field-row">
              <dt>Supervised</dt>
              <dd>
                yes, since {at(env.supervisedAt)} · grace {env.graceMs / 1000} s
              </dd>
            </div>
            <div className="field-row">
              <dt>Mechanism</dt>
              <dd>
                <span className="mono">{env.mechanism}</span>
                {env.weakest ? (
                  <span className="tag tag-warn"> weakest: a process that leaves the session and clears its environment is not seen</span>
                ) : null}
              </dd>
            </div>
            {env.stop ? null : (
              <>
                <div className="field-row">
                  <dt>Live processes</dt>
                  <dd>
                    {env.liveProcesses ?? <span className="muted">not reported</span>}{" "}
                    <span className="muted small">(latest report {at(env.statusAt)})</span>
                  </dd>
                </div>
                <div className="field-row">
                  <dt>State</dt>
                  <dd>{env.frozen ? <span className="tag tag-warn">frozen</span> : "thawed (running)"}</dd>
                </div>
              </>
            )}
          </dl>
          {env.stop ? (
            <>
              <p className={env.stop.verifiedEmpty ? undefined : "text-danger"}>
                {env.stop.verifiedEmpty ? (
                  <>
                    Environment terminated: {env.stop.processes.length} process{env.stop.processes.length === 1 ? "" : "es"} ended,
                    container empty at {at(env.stop.emptyAt)}.
                  </>
                ) : (
                  `Environment not verified empty: could not kill ${env.stop.survivors.join(", ") || "unknown pids"}.`
                )}
                {env.stop.reattached ? " Reported by a reattached supervisor." : ""}
              </p>
              <ProcessTable processes={env.stop.processes} label="Processes of this run (table)" />
            </>
          ) : env.resolvedAt ? (
            <p>
              Verified empty by a person: {labels[env.resolvedBy ?? ""] ?? env.resolvedBy} on {at(env.resolvedAt)} (their check, not the
              supervisor&apos;s).
            </p>
          ) : env.unknownSince ? (
            <p className="text-danger">
              Environment unknown since {at(env.unknownSince)}: its supervisor did not report; owned by {env.owner ?? "nobody yet"}.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

type ReceiptEnv = {
  run_id: string;
  supervised: boolean;
  statement: string;
  status?: string;
  mechanism?: string;
  weakest?: boolean;
  emptied_at?: string | null;
  could_not_kill?: number[];
  owner?: string | null;
  processes?: Proc[];
};

/** The receipt's environment section: one entry per run, exactly as the receipt states it. */
export function ReceiptEnvironment({ entries }: { entries: ReceiptEnv[] }) {
  return (
    <ul className="plain-list">
      {entries.map((e) => (
        <li key={e.run_id}>
          <p>
            <span className="mono">{e.run_id}</span>{" "}
            {e.supervised ? (
              <>
                <span className="tag">{e.status ?? "pending"}</span> <span className="mono">{e.mechanism}</span>
                {e.weakest ? <span className="tag tag-warn"> weakest mechanism</span> : null}
                {e.owner && e.status === "unknown" ? <> · owned by {e.owner}</> : null}
              </>
            ) : (
              <span className="muted">not supervised</span>
            )}
          </p>
          <p className={e.status === "unknown" ? "text-danger small" : "small"}>{e.statement}</p>
          {e.supervised && e.processes && e.processes.length > 0 ? (
            <ProcessTable processes={e.processes} label={`Processes of ${e.run_id} (table)`} />
          ) : null}
          {e.could_not_kill && e.could_not_kill.length > 0 ? (
            <p className="text-danger small">Could not kill: {e.could_not_kill.join(", ")}</p>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
