// The stop ladder: each rung with its status, evidence and time, in the stop vocabulary. "In progress" and
// "not proven" look different from "done" on purpose — a requested stop is not a stopped run.
import type { Rung } from "@/lib/modules/runs";
import { Time } from "./time";
import { duration } from "./format";
import { RUNG_STATUS_WORDS, RUNG_WORDS, wordFor } from "@/lib/control/stop-words";
import { GLOSSARY_BY_TERM } from "./glossary";

const ICON: Record<Rung["status"], string> = { done: "✓", pending: "…", uncertain: "?" };

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
              <span className="rung-label">{wordFor(RUNG_WORDS, r.id)}</span>
              <span className="rung-status" title={GLOSSARY_BY_TERM.get(RUNG_STATUS_WORDS[r.status].toLowerCase())?.short}>
                {RUNG_STATUS_WORDS[r.status]}
              </span>
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
