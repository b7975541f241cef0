"use client";
// The runs list (docs/console.md#runs-list): live (react-query + control events), filtered by status,
// harness, agent, time range and search, sorted, grouped under roots (expandable rows) and paged by a
// cursor. Every filter, the sort and the page live in the URL, so a view can be shared or saved.
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Fragment, useState, type FormEvent } from "react";
import type { RunRow } from "@/lib/modules/runs";
import type { RunsView } from "@/lib/modules/runs";
import type { SavedView } from "@/lib/modules/runs";
import { RUNS_QUERY_KEYS, VIEW_KEYS, parseRunsQuery, stopFilterOf } from "@/lib/schemas/runs-list";
import { createSavedViewAction, deleteSavedViewAction, matchingRunIdsAction } from "@/app/(console)/(lists)/runs/actions";
import { ActivityBadge, BreakerBadge, LifecycleBadge } from "./badges";
import { LIVE_ACTIVITIES } from "@/lib/control/activity";
import { Time } from "./time";
import { getJson, useHydrated } from "./providers";
import { EmptyState, ErrorNotice, LoadingBlock, StaleNotice } from "./states";
import { human, shortId } from "./format";
import { FleetStopDialog } from "./fleet-stop-dialog";
import type { StopFilterInput } from "@/lib/schemas/stops";
import { TableScroll } from "./table-scroll";

type StopTarget = { action: "pause" | "kill"; filter: StopFilterInput; label: string; confirmTeam?: string };

/** The list's own parameters from the URL, in a fixed order (the query key and the API's query string). */
function queryString(sp: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const k of RUNS_QUERY_KEYS) {
    const v = sp.get(k);
    if (v) out.set(k, v);
  }
  return out.toString();
}

const count = (n: number, capped: boolean) => `${capped ? `${n.toLocaleString("en-US")}+` : n.toLocaleString("en-US")}`;

export function RunsTable({
  initial,
  initialViews = [],
  canStop = false,
  teamName,
  pauseReclaim = null,
}: {
  initial: RunsView;
  initialViews?: SavedView[];
  canStop?: boolean;
  teamName?: string;
  /** the team's reclaim of paused runs (the fleet-pause dialog says it does not apply) */
  pauseReclaim?: { seconds: number; action: string } | null;
}) {
  const searchParams = useSearchParams();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  // "Select all N matching" for filters with no stop-scope form: the selection is then every matching
  // run's id, read when the button was pressed (listed), or why it could not be (listing.error).
  const [listed, setListed] = useState(false);
  const [listing, setListing] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const [stop, setStop] = useState<StopTarget | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const qs = queryString(new URLSearchParams(searchParams.toString()));
  const [initialQs] = useState(qs);
  const [search, setSearch] = useState(searchParams.get("q") ?? "");
  const [agent, setAgent] = useState(searchParams.get("agent") ?? "");
  // The spinner is shown only once hydrated: the server never renders it, and whether the query is
  // fetching at hydration depends on the browser's cache at that moment (docs/design/render-after-hydration.md).
  const hydrated = useHydrated();
  const query = useQuery({
    queryKey: ["runs", qs],
    queryFn: () => getJson<RunsView>(`/api/console/runs?${qs}`),
    initialData: qs === initialQs ? initial : undefined,
    placeholderData: keepPreviousData,
  });

  function navigate(changes: Record<string, string | null>) {
    const next = new URLSearchParams(qs);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    // A new filter or sort starts from the first page.
    if (!("cursor" in changes)) next.delete("cursor");
    setSelected(new Set());
    setAllMatching(false);
    setListed(false);
    setListing({ busy: false, error: null });
    const s = next.toString();
    window.history.pushState(null, "", s ? `/runs?${s}` : "/runs");
  }

  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    navigate({ q: search.trim() || null, agent: agent.trim() || null });
  };
  const data = query.data;
  const filtered = VIEW_KEYS.some((k) => k !== "sort" && searchParams.get(k));
  const grouped = searchParams.get("roots") === "1" || searchParams.get("roots") === "true";
  const matchingFilter = stopFilterOf(parseRunsQuery(new URLSearchParams(qs)).query);
  const pageIds = data?.items.map((r) => r.runId) ?? [];
  const pageAll = pageIds.length > 0 && pageIds.every((id) => selected.has(id));
  const toggle = (id: string) => {
    setAllMatching(false);
    setListed(false);
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  };
  const toggleExpanded = (id: string) =>
    setExpanded((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const selectionFilter = (): { filter: StopFilterInput; label: string } | null => {
    if (allMatching && matchingFilter && data)
      return { filter: matchingFilter, label: `all ${count(data.total, data.totalCapped)} runs matching these filters` };
    if (selected.size === 0) return null;
    if (listed)
      return {
        filter: { runIds: [...selected] },
        label: `the ${selected.size.toLocaleString("en-US")} run${selected.size === 1 ? "" : "s"} matching these filters now`,
      };
    return { filter: { runIds: [...selected] }, label: `${selected.size} selected run${selected.size === 1 ? "" : "s"}` };
  };
  const sel = selectionFilter();
  async function selectMatchingIds() {
    setListing({ busy: true, error: null });
    try {
      const r = await matchingRunIdsAction({ query: qs });
      if (!r.ok) return setListing({ busy: false, error: r.message });
      if (r.data.capped)
        return setListing({
          busy: false,
          error: `more than ${r.data.cap.toLocaleString("en-US")} runs match; a stop names at most ${r.data.cap.toLocaleString("en-US")} runs one by one: narrow the filters`,
        });
      setAllMatching(false);
      setSelected(new Set(r.data.ids));
      setListed(true);
      setListing({ busy: false, error: null });
    } catch {
      setListing({ busy: false, error: "could not list the matching runs (network error): try again" });
    }
  }
  const rowProps = { canStop, allMatching, selected, toggle, expanded, toggleExpanded };

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
        <p className="muted" data-testid="runs-count">
          {data
            ? `${count(data.total, data.totalCapped)} ${grouped ? "root run" : "run"}${data.total === 1 ? "" : "s"}${filtered ? " match" : ""}`
            : " "}
          {hydrated && query.isFetching ? <span className="spinner" aria-label="refreshing" /> : null}
        </p>
      </div>
      <SavedViews initial={initialViews} currentQuery={queryString(new URLSearchParams(qs.replace(/(^|&)cursor=[^&]*/, "")))} />
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
          <label className="select">
            <span>Agent</span>
            <input type="text" size={12} placeholder="agent id or creator" value={agent} onChange={(e) => setAgent(e.target.value)} />
          </label>
          <button className="btn" type="submit">
            Search
          </button>
        </form>
        <Select
          label="Status"
          value={searchParams.get("status")}
          options={["active", "paused", "killed", "finished"]}
          onChange={(v) => navigate({ status: v, lifecycle: null })}
        />
        <Select
          label="Activity"
          value={searchParams.get("activity")}
          options={[...LIVE_ACTIVITIES]}
          onChange={(v) => navigate({ activity: v })}
        />
        <Select
          label="Harness"
          value={searchParams.get("harness")}
          options={["claude_code", "codex", "mcp", "custom"]}
          onChange={(v) => navigate({ harness: v })}
        />
        <Select
          label="Breaker"
          value={searchParams.get("breaker")}
          options={["closed", "open", "half_open"]}
          onChange={(v) => navigate({ breaker: v })}
        />
        <DateInput label="From" value={searchParams.get("from")} onChange={(v) => navigate({ from: v })} />
        <DateInput label="Until" value={searchParams.get("to")} onChange={(v) => navigate({ to: v })} />
        <Select
          label="Sort"
          value={searchParams.get("sort")}
          options={["oldest", "task"]}
          anyLabel="newest first"
          onChange={(v) => navigate({ sort: v })}
        />
        <label className="check">
          <input type="checkbox" checked={grouped} onChange={(e) => navigate({ roots: e.target.checked ? "1" : null })} />
          Group under root runs
        </label>
        {filtered ? (
          <button
            type="button"
            className="btn btn-ghost"
            onClick={() => {
              setSearch("");
              setAgent("");
              window.history.pushState(null, "", "/runs");
            }}
          >
            Clear filters
          </button>
        ) : null}
      </div>
      {data && data.ignored.length > 0 ? (
        <p className="notice notice-warn" role="status" data-testid="ignored-params">
          Ignored in the address: {data.ignored.map((i) => `${i.key} (${i.message})`).join(", ")}.
        </p>
      ) : null}
      {canStop && (sel || pageAll) ? (
        <div className="toolbar selection-bar" role="region" aria-label="Selection">
          <span>{selectionWords(sel?.label ?? null)}</span>
          {pageAll && !allMatching && !listed && data && data.total > pageIds.length ? (
            matchingFilter ? (
              <button type="button" className="btn btn-small" onClick={() => setAllMatching(true)}>
                Select all {count(data.total, data.totalCapped)} matching
              </button>
            ) : (
              // Search, breaker and activity have no stop-scope form: the stop names the matching runs one by one.
              <button type="button" className="btn btn-small" disabled={listing.busy} onClick={selectMatchingIds}>
                {listing.busy ? "Listing the matching runs…" : `Select all ${count(data.total, data.totalCapped)} matching (by run id)`}
              </button>
            )
          ) : null}
          {listed && sel ? (
            <span className="muted" data-testid="listed-note">
              Named one by one (search, breaker and activity filters have no stop-scope form): runs created later are not covered, even if
              they match.
            </span>
          ) : null}
          {listing.error ? (
            <span role="alert" className="notice-error">
              {listing.error}
            </span>
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
                  setListed(false);
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
          pauseReclaim={pauseReclaim}
          onCancel={() => setStop(null)}
        />
      ) : null}
      {query.isError && data ? <StaleNotice error={query.error} /> : null}
      {!data && query.isPending ? <LoadingBlock label="Loading runs" rows={6} /> : null}
      {!data && query.isError ? <ErrorNotice message={query.error.message} retry={() => query.refetch()} /> : null}
      {data && data.items.length === 0 && (data.nextCursor || data.prevCursor) ? (
        // An activity filter judges a bounded walk of runs per page: none matched in this one, older runs may.
        <EmptyState title="None of these runs match here">
          No run of this stretch of the list has this activity; the next page judges older runs.
          <CursorPager
            busy={query.isPlaceholderData}
            prev={data.prevCursor}
            next={data.nextCursor}
            onPage={(c) => navigate({ cursor: c })}
            onFirst={searchParams.get("cursor") ? () => navigate({ cursor: null }) : null}
          />
        </EmptyState>
      ) : data && data.items.length === 0 ? (
        filtered ? (
          <EmptyState title="No runs match these filters">Clear the filters or search for another id.</EmptyState>
        ) : searchParams.get("cursor") ? (
          <EmptyState title="No more runs">
            <Link href="/runs">Back to the first page</Link>
          </EmptyState>
        ) : (
          <EmptyState title="No runs yet">
            Runs appear here as soon as an agent, worker or gateway registers one (<code>POST /api/v1/runs</code>, or the SDK&rsquo;s{" "}
            <code>createRun</code>).
          </EmptyState>
        )
      ) : null}
      {data && data.items.length > 0 ? (
        <>
          <TableScroll label="Runs (table)">
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
                          setListed(false);
                          setSelected(e.target.checked ? new Set(pageIds) : new Set());
                        }}
                      />
                    </th>
                  ) : null}
                  <th scope="col">Run</th>
                  <th scope="col">Task</th>
                  <th scope="col">Harness</th>
                  <th scope="col">Activity</th>
                  <th scope="col">Lifecycle</th>
                  <th scope="col">Breaker</th>
                  <th scope="col" className="num">
                    Epoch
                  </th>
                  <th scope="col" className="num">
                    In flight
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col">Last heard from</th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((r) => (
                  <RunRowWithChildren key={r.runId} run={r} level={0} grouped={grouped} {...rowProps} />
                ))}
              </tbody>
            </table>
          </TableScroll>
          <CursorPager
            busy={query.isPlaceholderData}
            prev={data.prevCursor}
            next={data.nextCursor}
            onPage={(c) => navigate({ cursor: c })}
            onFirst={searchParams.get("cursor") ? () => navigate({ cursor: null }) : null}
          />
        </>
      ) : null}
    </section>
  );
}

interface RowProps {
  canStop: boolean;
  allMatching: boolean;
  selected: ReadonlySet<string>;
  toggle: (id: string) => void;
  expanded: ReadonlySet<string>;
  toggleExpanded: (id: string) => void;
}

/** A row and, when expanded, its direct children (each expandable in turn). */
function RunRowWithChildren({ run, level, grouped, ...p }: RowProps & { run: RunRow; level: number; grouped: boolean }) {
  const open = p.expanded.has(run.runId);
  return (
    <>
      <RunTableRow run={run} level={level} expandable={(grouped || level > 0) && run.childCount > 0} open={open} {...p} />
      {open ? <ChildRows parentId={run.runId} childCount={run.childCount} level={level + 1} {...p} /> : null}
    </>
  );
}

const CHILD_PAGE = 100;

function ChildRows({ parentId, childCount, level, ...p }: RowProps & { parentId: string; childCount: number; level: number }) {
  const cols = p.canStop ? 11 : 10;
  const children = useQuery({
    queryKey: ["runs", "children", parentId],
    queryFn: () => getJson<RunsView>(`/api/console/runs?parent=${encodeURIComponent(parentId)}&sort=oldest&pageSize=${CHILD_PAGE}`),
  });
  if (!children.data)
    return (
      <tr>
        <td colSpan={cols} className="muted" style={{ paddingLeft: `${1 + level * 1.5}rem` }}>
          {children.isError ? `Could not load the children: ${children.error.message}` : "Loading children…"}
        </td>
      </tr>
    );
  return (
    <>
      {children.data.items.map((c) => (
        <Fragment key={c.runId}>
          <RunRowWithChildren run={c} level={level} grouped {...p} />
        </Fragment>
      ))}
      {childCount > children.data.items.length ? (
        <tr>
          <td colSpan={cols} className="muted" style={{ paddingLeft: `${1 + level * 1.5}rem` }}>
            {childCount - children.data.items.length} more — <Link href={`/runs/${parentId}`}>open the run</Link> to see its whole tree.
          </td>
        </tr>
      ) : null}
    </>
  );
}

function RunTableRow({
  run: r,
  level,
  expandable,
  open,
  canStop,
  allMatching,
  selected,
  toggle,
  toggleExpanded,
}: RowProps & { run: RunRow; level: number; expandable: boolean; open: boolean }) {
  const name = r.title ?? r.taskId;
  return (
    <tr className={r.lifecycle === "killed" ? "row-dim" : undefined} data-level={level}>
      {canStop ? (
        <td className="check-col">
          <input
            type="checkbox"
            aria-label={`Select ${name}`}
            checked={(allMatching && level === 0) || selected.has(r.runId)}
            onChange={() => toggle(r.runId)}
          />
        </td>
      ) : null}
      <td style={level ? { paddingLeft: `${0.75 + level * 1.5}rem` } : undefined}>
        {expandable ? (
          <button
            type="button"
            className="btn btn-small btn-ghost expand"
            aria-expanded={open}
            aria-label={`${open ? "Collapse" : "Expand"} ${name} (${r.childCount} child${r.childCount === 1 ? "" : "ren"})`}
            onClick={() => toggleExpanded(r.runId)}
          >
            {open ? "▾" : "▸"}
          </button>
        ) : null}{" "}
        <Link href={`/runs/${r.runId}`} className="run-link">
          {name}
        </Link>
        <div className="sub mono" title={r.runId}>
          {shortId(r.runId)}
          {r.parentRunId && level === 0 ? (
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
          {r.agent ? <> · {r.agent}</> : null}
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
        <ActivityBadge value={r.activity} />
      </td>
      <td>
        <LifecycleBadge value={r.lifecycle} />
        {r.status === "finished" ? (
          <>
            {" "}
            <span className="tag" title={r.finishedAt ?? undefined}>
              finished
            </span>
          </>
        ) : null}
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
        <Time iso={r.lastHeardAt} mode="relative" />
      </td>
    </tr>
  );
}

/** The member's saved views: open one (a link to its URL), delete one, save the current filters as one. */
function SavedViews({ initial, currentQuery }: { initial: SavedView[]; currentQuery: string }) {
  const [views, setViews] = useState(initial);
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function save(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await createSavedViewAction({ name, query: currentQuery });
      if (!r.ok) return setError(r.message);
      setViews((v) => [...v.filter((x) => x.id !== r.data.id), r.data].sort((a, b) => a.name.localeCompare(b.name)));
      setNaming(false);
      setName("");
    } catch {
      setError("could not save the view (network error): try again");
    } finally {
      setBusy(false);
    }
  }
  async function remove(v: SavedView) {
    setError(null);
    try {
      const r = await deleteSavedViewAction({ viewId: v.id });
      if (!r.ok) return setError(r.message);
      setViews((all) => all.filter((x) => x.id !== v.id));
    } catch {
      setError("could not delete the view (network error): try again");
    }
  }
  return (
    <nav className="toolbar saved-views" aria-label="Saved views">
      <span className="muted">Views:</span>
      {views.length === 0 ? <span className="muted">none saved yet</span> : null}
      {views.map((v) => (
        <span key={v.id} className="saved-view">
          <Link href={v.query ? `/runs?${v.query}` : "/runs"} aria-current={v.query === currentQuery ? "page" : undefined}>
            {v.name}
          </Link>{" "}
          <button type="button" className="btn btn-small btn-ghost" aria-label={`Delete view ${v.name}`} onClick={() => remove(v)}>
            ×
          </button>
        </span>
      ))}
      {naming ? (
        <form onSubmit={save} className="search">
          <label className="select">
            <span>View name</span>
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={80} autoFocus />
          </label>
          <button className="btn btn-small" type="submit" disabled={busy || !name.trim()}>
            Save
          </button>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => setNaming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" className="btn btn-small" onClick={() => setNaming(true)}>
          Save this view…
        </button>
      )}
      {error ? (
        <span role="alert" className="notice-error">
          {error}
        </span>
      ) : null}
    </nav>
  );
}

function Select({
  label,
  value,
  options,
  onChange,
  anyLabel = "any",
}: {
  label: string;
  value: string | null;
  options: string[];
  onChange: (v: string | null) => void;
  anyLabel?: string;
}) {
  return (
    <label className="select">
      <span>{label}</span>
      <select value={value ?? ""} onChange={(e) => onChange(e.target.value || null)}>
        <option value="">{anyLabel}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {human(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

function DateInput({ label, value, onChange }: { label: string; value: string | null; onChange: (v: string | null) => void }) {
  // A date input shows YYYY-MM-DD; a full ISO time from a shared link is kept in the URL as given.
  const shown = value && /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : "";
  return (
    <label className="select">
      <span>{label}</span>
      <input type="date" value={shown} onChange={(e) => onChange(e.target.value || null)} />
    </label>
  );
}

export function CursorPager({
  prev,
  next,
  onPage,
  onFirst,
  busy = false,
}: {
  /** the page shown is the previous one while the next loads: no paging from it */
  busy?: boolean;
  prev: string | null;
  next: string | null;
  onPage: (cursor: string) => void;
  onFirst: (() => void) | null;
}) {
  if (!prev && !next) return null;
  return (
    <nav className="pager" aria-label="Pages">
      {onFirst ? (
        <button type="button" className="btn btn-small btn-ghost" onClick={onFirst}>
          ⇤ First page
        </button>
      ) : null}
      <button type="button" className="btn btn-small" disabled={busy || !prev} onClick={() => prev && onPage(prev)}>
        ← Previous
      </button>
      <button type="button" className="btn btn-small" disabled={busy || !next} onClick={() => next && onPage(next)}>
        Next →
      </button>
    </nav>
  );
}

/** The selection bar's sentence, saying "selected" once: "3 runs selected for a fleet stop." */
function selectionWords(label: string | null): string {
  if (!label) return "No runs selected for a fleet stop.";
  const plain = /^(\S+) selected (runs?)$/.exec(label);
  if (plain) return `${plain[1]} ${plain[2]} selected for a fleet stop.`;
  return `${label[0]!.toUpperCase()}${label.slice(1)} selected for a fleet stop.`;
}
