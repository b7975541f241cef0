"use client";
// Open work (docs/console.md#open-work): the managers' view of what still needs a person — unknown outcomes
// and recovery items side by side, filtered by status, owner and age in the URL (shareable), with the team's
// counts in the header. The filters are the module's queries; this component only sets the URL. An empty list says
// what its filters hide (from the same counts), and each action's result is announced in one toast.
import { useRouter, useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { OpenWorkView } from "@/lib/modules/runs";
import { OPEN_WORK_AGES, OPEN_WORK_AGE_LABELS, openWorkQueryString, openWorkTotal, type OpenWorkAge } from "@/lib/control/open-work";
import { ReconciliationQueue } from "./reconciliation-queue";
import { RecoveryQueue } from "./recovery-queue";
import { getJson } from "./providers";
import { ErrorNotice, LoadingBlock, StaleNotice, Toast, type ToastMessage } from "./states";

export function OpenWork({
  initial,
  initialQuery,
  me,
  canAssign,
  canActOnAny,
}: {
  initial: OpenWorkView;
  initialQuery: string;
  me: string;
  canAssign: boolean;
  canActOnAny: boolean;
}) {
  const sp = useSearchParams();
  const router = useRouter();
  const qs = openWorkQueryString((k) => sp.get(k));
  const q = useQuery({
    queryKey: ["open-work", qs],
    queryFn: () => getJson<OpenWorkView>(`/api/console/reconciliations?${qs}`),
    initialData: qs === initialQuery ? initial : undefined,
  });
  const data = q.data;
  const [feedback, setFeedback] = useState<ToastMessage | null>(null);
  const status = sp.get("status") ?? "open";
  const owner = sp.get("owner") ?? "";
  const age = (OPEN_WORK_AGES as readonly string[]).includes(sp.get("age") ?? "") ? (sp.get("age") as OpenWorkAge) : "any";
  const members = data?.members ?? initial.members;
  const filter = {
    status: (["open", "resolved", "all"] as const).find((s) => s === status) ?? "open",
    owner,
    ownerName: members.find((m) => m.id === owner)?.name ?? null,
    age,
  };
  const go = (next: Record<string, string | null>) => {
    const u = new URLSearchParams(qs);
    for (const [k, v] of Object.entries(next)) {
      if (v) u.set(k, v);
      else u.delete(k);
    }
    const s = openWorkQueryString((k) => u.get(k));
    window.history.pushState(null, "", s ? `/reconciliations?${s}` : "/reconciliations");
  };

  // The navigation's badge is rendered by the layout: when polling finds a new total, re-render it too,
  // so the badge and this header never disagree for longer than one poll.
  const total = data ? openWorkTotal(data.counts) : null;
  const shown = useRef(openWorkTotal(initial.counts));
  useEffect(() => {
    if (total !== null && total !== shown.current) {
      shown.current = total;
      router.refresh();
    }
  }, [total, router]);

  return (
    <div className="stack">
      <div className="page-head">
        <h1 id="open-work-title">Open work</h1>
        <p className="muted">
          What still needs a person: outcomes no barrier could prove either way, and effects a stop found completed that must be rolled back
          or accepted.
        </p>
      </div>
      {data ? (
        <section aria-label="Open work counts" className="stats" data-testid="open-work-counts">
          <Count label="open unknowns" value={data.counts.unknowns} name="unknowns" />
          <Count label="open recovery items" value={data.counts.recoveries} name="recoveries" />
          <Count label="overdue" value={data.counts.overdue} name="overdue" warn={data.counts.overdue > 0} />
        </section>
      ) : null}
      <div className="toolbar open-work-filters" role="group" aria-label="Filters">
        <div className="select">
          <span id="status-label">Status</span>
          <div className="tabs" role="group" aria-labelledby="status-label">
            {(["open", "resolved", "all"] as const).map((s) => (
              <button
                key={s}
                type="button"
                className={`tab ${status === s ? "active" : ""}`}
                aria-pressed={status === s}
                onClick={() => go({ status: s === "open" ? null : s })}
              >
                {s}
              </button>
            ))}
          </div>
        </div>
        <label className="select">
          <span>Owner</span>
          <select value={owner} onChange={(e) => go({ owner: e.target.value || null })}>
            <option value="">anyone</option>
            <option value="me">me</option>
            <option value="none">nobody yet</option>
            {members.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name} ({m.email})
              </option>
            ))}
          </select>
        </label>
        <div className="select">
          <span id="age-label">Age</span>
          <div className="tabs" role="group" aria-labelledby="age-label">
            {OPEN_WORK_AGES.map((a) => (
              <button
                key={a}
                type="button"
                className={`tab tab-plain ${age === a ? "active" : ""}`}
                aria-pressed={age === a}
                onClick={() => go({ age: a === "any" ? null : a })}
              >
                {OPEN_WORK_AGE_LABELS[a]}
              </button>
            ))}
          </div>
        </div>
      </div>
      {q.isError && data ? <StaleNotice error={q.error} /> : null}
      {!data && q.isPending ? <LoadingBlock label="Loading open work" /> : null}
      {!data && q.isError ? <ErrorNotice message={q.error.message} retry={() => q.refetch()} /> : null}
      {data ? (
        <div className="open-work">
          <ReconciliationQueue
            items={data.reconciliations}
            members={data.members}
            labels={data.labels}
            counts={data.counts}
            filter={filter}
            me={me}
            canAssign={canAssign}
            canResolveAny={canActOnAny}
            onFeedback={setFeedback}
          />
          <RecoveryQueue
            items={data.recoveries}
            members={data.members}
            counts={data.counts}
            filter={filter}
            me={me}
            canAssign={canAssign}
            canActOnAny={canActOnAny}
            onFeedback={setFeedback}
          />
        </div>
      ) : null}
      <Toast message={feedback} onDismiss={() => setFeedback(null)} />
    </div>
  );
}

function Count({ label, value, name, warn = false }: { label: string; value: number; name: string; warn?: boolean }) {
  return (
    <div className={`stat${warn ? " stat-warn" : ""}`} data-count={name}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}
