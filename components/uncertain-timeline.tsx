"use client";
// Uncertain intervals on one time axis: when the truth about an operation was not known, and why.
// An interval still open runs to "now" and is drawn hatched.
import type { UncertainRow } from "@/lib/modules/runs";
import { Time, useNow } from "./time";
import { human, duration } from "./format";

export function UncertainTimeline({ items, labels = {} }: { items: UncertainRow[]; labels?: Record<string, string> }) {
  const current = useNow();
  if (items.length === 0) return null;
  // Before the client's clock is known (server render), an open interval runs to the last known instant.
  const now = current ?? Math.max(...items.map((i) => new Date(i.endedAt ?? i.startedAt).getTime()));
  const start = Math.min(...items.map((i) => new Date(i.startedAt).getTime()));
  const end = Math.max(...items.map((i) => (i.endedAt ? new Date(i.endedAt).getTime() : now)), start + 1000);
  const span = end - start;
  return (
    <div className="timeline" role="list" aria-label="Uncertain intervals">
      <div className="timeline-axis" aria-hidden>
        <Time iso={new Date(start).toISOString()} mode="absolute" />
        <Time iso={new Date(end).toISOString()} mode="absolute" />
      </div>
      {items.map((i) => {
        const s = new Date(i.startedAt).getTime();
        const e = i.endedAt ? new Date(i.endedAt).getTime() : now;
        const left = ((s - start) / span) * 100;
        const width = Math.max(((e - s) / span) * 100, 0.8);
        const by = i.resolvedBy ? `reconciled by ${labels[i.resolvedBy] ?? i.resolvedBy}` : null;
        const label = `${i.tool} (${i.operationId}): ${human(i.cause)}, ${i.endedAt ? `${duration(i.startedAt, i.endedAt)}, ${human(i.resolution)}${by ? `, ${by}` : ""}` : "still open"}`;
        return (
          <div key={i.id} className="timeline-row" role="listitem" aria-label={label}>
            <div className="timeline-label">
              <span className="mono">{i.tool}</span> <span className="muted">{human(i.cause)}</span>
            </div>
            <div className="timeline-track">
              <div className={`timeline-bar ${i.endedAt ? "" : "open"}`} style={{ left: `${left}%`, width: `${width}%` }} title={label} />
            </div>
            <div className="timeline-res">
              {i.endedAt ? (human(i.resolution) ?? "ended") : <strong>open</strong>}
              {by ? <span className="sub">{by}</span> : null}
            </div>
          </div>
        );
      })}
    </div>
  );
}
