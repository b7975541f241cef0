"use client";
// The runs list: live (react-query + control events), filterable, searchable, paginated. Filters live
// in the URL so a view can be shared ("every paused run of the claude-code harness").
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { RunsPage } from "@/lib/dal/console/runs";
import { BreakerBadge, LifecycleBadge } from "./badges";
import { Time } from "./time";
import { getJson } from "./providers";
import { EmptyState, ErrorNotice, LoadingBlock, StaleNotice } from "./states";
import { human, shortId } from "./format";
import { FleetStopDialog } from "./fleet-stop-dialog";
import type { StopFilterInput } from "@/lib/schemas/stops";

/** The list's filters as a fleet-stop filter, or null when one of them (search, breaker) has no such form. */
function stopFilterOf(sp: URLSearchParams): StopFilterInput | null {
  if (sp.get("q") || sp.get("breaker")) return null;
  const f: StopFilterInput = {};
  const lc = sp.get("lifecycle");
  if (lc) f.status = [lc === "normal" ? "active" : lc === "paused" ? "paused" : "killed"];
  const h = sp.get("harness");
  if (h === "claude_code" || h === "codex" || h === "mcp" || h === "custom") f.harness = [h];
  return f;
}

type StopTarget = { action: "pause" | "kill"; filter: StopFilterInput; label: string; confirmTeam?: string };

const FILTERS = ["lifecycle", "breaker", "harness", "q", "roots", "page"] as const;

function queryString(sp: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const k of FILTERS) {
    const v = sp.get(k);
    if (v) out.set(k, v);
  }
  return out.toString();
}

export function RunsTable({
  initial,
  initialQuery,
  canStop = false,
  teamName,
}: {
  initial: RunsPage;
  initialQuery: string;
  canStop?: boolean;
  teamName?: string;
}) {
  const searchParams = useSearchParams();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [stop, setStop] = useState<StopTarget | null>(null);
  const qs = queryString(new URLSearchParams(searchParams.toString()));
  const [search, setSearch] = useState(searchParams.get("q") ?? "");
  const query = useQuery({
    queryKey: ["runs", qs],
    queryFn: () => getJson<RunsPage>(`/api/console/runs?${qs}`),
    initialData: qs === initialQuery ? initial : undefined,
    placeholderData: keepPreviousData,
  });

  function navigate(changes: Record<string, string | null>) {
    const next = new URLSearchParams(qs);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    if (!("page" in changes)) next.delete("page");
    setSelected(new Set());
    setAllMatching(false);
    const s = next.toString();
    window.history.pushState(null, "", s ? `/runs?${s}` : "/runs");
  }

  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    navigate({ q: search.trim() || null });
  };
  const data = query.data;
  const filtered = FILTERS.some((k) => k !== "page" && searchParams.get(k));
  const matchingFilter = stopFilterOf(new URLSearchParams(qs));
  const pageIds = data?.items.map((r) => r.id) ?? [];
  const pageAll = pageIds.length > 0 && pageIds.every((id) => selected.has(id));
  const toggle = (id: string) => {
    setAllMatching(false);
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  };
  const selectionFilter = (): { filter: StopFilterInput; label: string } | null => {
    if (allMatching && matchingFilter && data) return { filter: matchingFilter, label: `all ${data.total} runs matching these filters` };
    if (selected.size === 0) return null;
    return { filter: { runIds: [...selected] }, label: `${selected.size} selected run${selected.size === 1 ? "" : "s"}` };
  };
  const sel = selectionFilter();

  return (
    <section aria-labelledby="runs-title">
      <div className="page-head">
        <h1 id="runs-title">Runs</h1>
        {canStop && teamName ? (
          <button
            type="button"
            className="btn btn-danger"
            onClick={() => setStop({ action: "kill", filter: {}, label: "every run of the team", confirmTeam: teamName })}
          >
            Stop everything…
          </button>
        ) : null}
        <p className="muted">
          {data ? `${data.total} run${data.total === 1 ? "" : "s"}${filtered ? " match" : ""}` : " "}
          {query.isFetching ? <span className="spinner" aria-label="refreshing" /> : null}
        </p>
      </div>
      <div className="toolbar" role="search">
        <form onSubmit={onSearch} className="search">
          <label className="sr-only" htmlFor="run-search">
            Search runs
          </label>
          <input
            id="run-search"
            type="search"
            placeholder="Search run id, task, title, session id"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <button className="btn" type="submit">
            Search
          </button>
        </form>
        <Select
          label="Lifecycle"
          value={searchParams.get("lifecycle")}
          options={["normal", "paused", "killed"]}
          onChange={(v) => navigate({ lifecycle: v })}
        />
        <Select
          label="Breaker"
          value={searchParams.get("breaker")}
          options={["closed", "open", "half_open"]}
          onChange={(v) => navigate({ breaker: v })}
        />
        <Select
          label="Harness"
          value={searchParams.get("harness")}
          options={["claude_code", "codex", "mcp", "custom"]}
          onChange={(v) => navigate({ harness: v })}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={searchParams.get("roots") === "1"}
            onChange={(e) => navigate({ roots: e.target.checked ? "1" : null })}
          />
          Root runs only
        </label>
        {filtered ? (
          <button
            type="button"
            className="btn btn-ghost"
            onClick={() => {
              setSearch("");
              window.history.pushState(null, "", "/runs");
            }}
          >
            Clear filters
          </button>
        ) : null}
      </div>
      {canStop && (sel || pageAll) ? (
        <div className="toolbar selection-bar" role="region" aria-label="Selection">
          <span>{sel ? `${sel.label[0]!.toUpperCase()}${sel.label.slice(1)}` : "No runs"} selected for a fleet stop.</span>
          {pageAll && !allMatching && data && data.total > pageIds.length ? (
            matchingFilter ? (
              <button type="button" className="btn btn-small" onClick={() => setAllMatching(true)}>
                Select all {data.total} matching
              </button>
            ) : (
              <span className="muted">(search and breaker filters cannot be stopped as a filter: select runs instead)</span>
            )
          ) : null}
          {sel ? (
            <>
              <button type="button" className="btn btn-small" onClick={() => setStop({ action: "pause", ...sel })}>
                Pause selected…
              </button>
              <button type="button" className="btn btn-small btn-danger" onClick={() => setStop({ action: "kill", ...sel })}>
                Kill selected…
              </button>
              <button
                type="button"
                className="btn btn-small btn-ghost"
                onClick={() => {
                  setSelected(new Set());
                  setAllMatching(false);
                }}
              >
                Clear selection
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {stop ? (
        <FleetStopDialog
          open
          action={stop.action}
          filter={stop.filter}
          label={stop.label}
          confirmTeam={stop.confirmTeam}
          onCancel={() => setStop(null)}
        />
      ) : null}
      {query.isError && data ? <StaleNotice error={query.error} /> : null}
      {!data && query.isPending ? <LoadingBlock label="Loading runs" rows={6} /> : null}
      {!data && query.isError ? <ErrorNotice message={query.error.message} retry={() => query.refetch()} /> : null}
      {data && data.items.length === 0 ? (
        filtered ? (
          <EmptyState title="No runs match these filters">Clear the filters or search for another id.</EmptyState>
        ) : (
          <EmptyState title="No runs yet">
            Runs appear here as soon as an agent, worker or gateway registers one (<code>POST /api/v1/runs</code>, or the SDK&rsquo;s{" "}
            <code>createRun</code>).
          </EmptyState>
        )
      ) : null}
      {data && data.items.length > 0 ? (
        <>
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  {canStop ? (
                    <th scope="col" className="check-col">
                      <input
                        type="checkbox"
                        aria-label="Select every run on this page"
                        checked={pageAll}
                        onChange={(e) => {
                          setAllMatching(false);
                          setSelected(e.target.checked ? new Set(pageIds) : new Set());
                        }}
                      />
                    </th>
                  ) : null}
                  <th scope="col">Run</th>
                  <th scope="col">Task</th>
                  <th scope="col">Harness</th>
                  <th scope="col">Lifecycle</th>
                  <th scope="col">Breaker</th>
                  <th scope="col" className="num">
                    Epoch
                  </th>
                  <th scope="col" className="num">
                    In flight
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col">Last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((r) => (
                  <tr key={r.id} className={r.lifecycle === "killed" ? "row-dim" : undefined}>
                    {canStop ? (
                      <td className="check-col">
                        <input
                          type="checkbox"
                          aria-label={`Select ${r.title ?? r.taskId}`}
                          checked={allMatching || selected.has(r.id)}
                          onChange={() => toggle(r.id)}
                        />
                      </td>
                    ) : null}
                    <td>
                      <Link href={`/runs/${r.id}`} className="run-link">
                        {r.title ?? r.taskId}
                      </Link>
                      <div className="sub mono" title={r.id}>
                        {shortId(r.id)}
                        {r.parentRunId ? (
                          <>
                            {" "}
                            · child of <span title={r.parentRunId}>{shortId(r.parentRunId)}</span>
                          </>
                        ) : null}
                        {r.childCount ? (
                          <>
                            {" "}
                            · {r.childCount} child{r.childCount === 1 ? "" : "ren"}
                          </>
                        ) : null}
                        {r.isDrill ? (
                          <>
                            {" "}
                            · <span className="tag">drill</span>
                          </>
                        ) : null}
                      </div>
                    </td>
                    <td className="mono">{r.taskId}</td>
                    <td>{human(r.harness)}</td>
                    <td>
                      <LifecycleBadge value={r.lifecycle} />
                    </td>
                    <td>
                      <BreakerBadge value={r.breaker} />
                    </td>
                    <td className="num">{r.epoch}</td>
                    <td className="num">{r.running}</td>
                    <td>
                      <Time iso={r.createdAt} mode="relative" />
                    </td>
                    <td>
                      <Time iso={r.lastHeartbeatAt} mode="relative" empty="never" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} onPage={(p) => navigate({ page: p === 1 ? null : String(p) })} />
        </>
      ) : null}
    </section>
  );
}

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | null;
  options: string[];
  onChange: (v: string | null) => void;
}) {
  return (
    <label className="select">
      <span>{label}</span>
      <select value={value ?? ""} onChange={(e) => onChange(e.target.value || null)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {human(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Pager({ page, pages, onPage }: { page: number; pages: number; onPage: (p: number) => void }) {
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="btn btn-small" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" className="btn btn-small" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}
