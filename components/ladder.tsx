// The stop ladder: each rung with its status, evidence and time. "Pending" and "uncertain" look
// different from "done" on purpose — a requested stop is not a stopped run.
import type { Rung } from "@/lib/modules/runs";
import { Time } from "./time";
import { duration } from "./format";

const ICON: Record<Rung["status"], string> = { done: "✓", pending: "…", uncertain: "?" };
const WORD: Record<Rung["status"], string> = { done: "done", pending: "pending", uncertain: "uncertain" };

export function Ladder({ rungs, startedAt }: { rungs: Rung[]; startedAt: string }) {
  return (
    <ol className="ladder" aria-label="Stop ladder">
      {rungs.map((r) => (
        <li key={r.id} className={`rung rung-${r.status}`} data-rung={r.id} data-status={r.status}>
          <span className="rung-icon" aria-hidden>
            {ICON[r.status]}
          </span>
          <div className="rung-main">
            <div className="rung-head">
              <span className="rung-label">{r.label}</span>
              <span className="rung-status">{WORD[r.status]}</span>
              {r.at ? (
                <span className="rung-time">
                  <Time iso={r.at} mode="absolute" />
                  {r.id !== "cancellation_requested" ? <span className="muted"> (+{duration(startedAt, r.at)})</span> : null}
                </span>
              ) : null}
            </div>
            <div className="rung-detail">{r.detail}</div>
          </div>
        </li>
      ))}
    </ol>
  );
}
