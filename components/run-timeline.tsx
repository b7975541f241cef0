"use client";
// The run's event history (docs/console.md#run-timeline): gate decisions, operations, control events and
// acknowledgments in one newest-first timeline, paged by a cursor ("Older" / "Newer").
import Link from "next/link";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { TimelinePage } from "@/lib/modules/runs";
import { Time } from "./time";
import { DataTable } from "./data-table";
import { getJson } from "./providers";
import { EmptyState, ErrorNotice, LoadingBlock } from "./states";
import { human } from "./format";

const KIND_LABEL: Record<string, string> = { decision: "gate", operation: "operation", control: "control", ack: "acknowledgment" };

export function RunTimeline({ runId, labels = {} }: { runId: string; labels?: Record<string, string> }) {
  // The cursors of the pages above the one shown (newest first); empty = the first page.
  const [stack, setStack] = useState<string[]>([]);
  const cursor = stack[stack.length - 1];
  const q = useQuery({
    queryKey: ["timeline", runId, cursor ?? ""],
    queryFn: () =>
      getJson<TimelinePage>(
        `/api/console/runs/${encodeURIComponent(runId)}/timeline${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`,
      ),
    placeholderData: keepPreviousData,
  });
  const page = q.data;
  // While the next page loads, the previous one stays on screen (placeholder) but cannot be paged from.
  const loading = q.isPlaceholderData;
  return (
    <section aria-labelledby="timeline-title" className="card" data-testid="run-timeline" aria-busy={loading}>
      <h2 id="timeline-title">
        Event history <span className="muted">(gate decisions, operations, control events, acknowledgments — newest first)</span>
      </h2>
      {!page && q.isPending ? <LoadingBlock label="Loading the event history" rows={4} /> : null}
      {!page && q.isError ? <ErrorNotice message={q.error.message} retry={() => q.refetch()} /> : null}
      {page && page.items.length === 0 ? <EmptyState title="No events yet" /> : null}
      {page && page.items.length > 0 ? (
        <DataTable wrap columns={["When", "Kind", "Event", "Detail", "By"]}>
          {page.items.map((e) => (
            <tr key={e.key} data-kind={e.kind}>
              <td>
                <Time iso={e.at} />
              </td>
              <td>
                <span className="tag">{KIND_LABEL[e.kind] ?? e.kind}</span>
              </td>
              <td>{e.link ? <Link href={e.link}>{human(e.title)}</Link> : human(e.title)}</td>
              <td className="muted">{e.detail || "—"}</td>
              <td>{e.actor ? (labels[e.actor] ?? e.actor) : "—"}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {page && (stack.length > 0 || page.nextCursor) ? (
        <nav className="pager" aria-label="Event history pages">
          <button
            type="button"
            className="btn btn-small"
            disabled={loading || stack.length === 0}
            onClick={() => setStack((s) => s.slice(0, -1))}
          >
            ← Newer
          </button>
          <span className="muted">page {stack.length + 1}</span>
          <button
            type="button"
            className="btn btn-small"
            disabled={loading || !page.nextCursor}
            onClick={() => page.nextCursor && setStack((s) => [...s, page.nextCursor!])}
          >
            Older →
          </button>
        </nav>
      ) : null}
    </section>
  );
}
