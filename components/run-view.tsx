"use client";
// The run page, live: header with both state machines and the controls, the stop ladder while a
// barrier is open, the tree, in-flight calls, uncertain intervals and the gate's recent decisions.
import { ReasonText } from "./reason-text";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import type { RunView as RunViewData, TreeNode } from "@/lib/modules/runs";
import type { BarrierView as BarrierViewData } from "@/lib/modules/runs";
import { ActivityBadge, BreakerBadge, DecisionBadge, LifecycleBadge, PhaseBadge, ReceiptDecisionBadge } from "./badges";
import { DataTable } from "./data-table";
import { TableScroll } from "./table-scroll";
import { Term } from "./term";
import { Time, useNow } from "./time";
import { getJson } from "./providers";
import { EmptyState, StaleNotice } from "./states";
import { human, shortId } from "./format";
import { RunControls, type Can } from "./run-controls";
import { Ladder } from "./ladder";
import { UncertainTimeline } from "./uncertain-timeline";
import { RunTimeline } from "./run-timeline";
import { RunEnvironmentPanel } from "./environment";
import { barrierHeading } from "@/lib/control/stop-words";

export function RunView({ initial, can }: { initial: RunViewData; can: Can }) {
  const runId = initial.run.runId;
  const q = useQuery({ queryKey: ["run", runId], queryFn: () => getJson<RunViewData>(`/api/console/runs/${runId}`), initialData: initial });
  const d = q.data;
  const run = d.run;
  const open = d.barriers.find((b) => b.phase !== "complete");
  const latest = open ?? d.barriers[0];
  const descendants = countDescendants(d.tree, run.runId);
  return (
    <article aria-labelledby="run-title">
      <StaleNotice error={q.isError ? q.error : null} />
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link href="/runs">Runs</Link>
        {run.parentRunId ? (
          <>
            {" "}
            / <Link href={`/runs/${run.rootRunId}`}>root {shortId(run.rootRunId)}</Link>
          </>
        ) : null}{" "}
        / <span className="mono">{shortId(run.runId)}</span>
      </nav>
      <header className="run-head">
        <div>
          <h1 id="run-title">{run.title ?? run.taskId}</h1>
          <div className="meta">
            <span className="mono" title="run id">
              {run.runId}
            </span>
            <span>
              task <span className="mono">{run.taskId}</span>
            </span>
            <span>{human(run.harness)}</span>
            <span>
              <Term id="epoch">epoch</Term> {run.epoch}
            </span>
            <span>
              started <Time iso={run.createdAt} />
            </span>
            <span data-testid="last-heard">
              last heard from <Time iso={run.lastHeardAt} mode="relative" />
            </span>
            {run.isDrill ? <span className="muted">drill run</span> : null}
          </div>
          <NativeIdentities run={run} />
          {d.restart.from || d.restart.as ? (
            <p className="muted small" data-testid="restart-links">
              {d.restart.from ? (
                <>
                  Restarted from <Link href={`/runs/${d.restart.from}`}>{shortId(d.restart.from)}</Link> on settled ground
                  {d.restart.fromDigest ? (
                    <>
                      {" "}
                      (receipt <span className="mono">{d.restart.fromDigest.slice(0, 12)}…</span>)
                    </>
                  ) : null}
                  .{" "}
                </>
              ) : null}
              {d.restart.as ? (
                <>
                  Restarted as <Link href={`/runs/${d.restart.as}`}>{shortId(d.restart.as)}</Link>.
                </>
              ) : null}
            </p>
          ) : null}
          <div className="state-row">
            <ActivityBadge value={run.activity} />
            <span className="state-why">
              {run.running ? `${run.running} call${run.running === 1 ? "" : "s"} in flight` : "nothing in flight"}
            </span>
          </div>
          <div className="state-row">
            <LifecycleBadge value={run.lifecycle} />
            {run.lifecycle === "paused" && d.pausePolicy ? <PauseReclaim since={run.lifecycleChangedAt} policy={d.pausePolicy} /> : null}
            <span className="state-why">
              {run.lifecycleReason ? <ReasonText reason={run.lifecycleReason} /> : null}{" "}
              {run.lifecycle !== "normal" ? (
                <>
                  by {d.labels[run.lifecycleChangedBy ?? ""] ?? run.lifecycleChangedBy ?? "?"},{" "}
                  <Time iso={run.lifecycleChangedAt} mode="relative" />
                </>
              ) : null}
            </span>
          </div>
          <div className="state-row">
            <BreakerBadge value={run.breaker} />
            <span className="state-why">
              {run.breaker !== "closed" || run.breakerFailures ? (
                <>
                  {run.breakerReason ? `“${run.breakerReason}” · ` : ""}
                  {run.breakerFailures} recent failure{run.breakerFailures === 1 ? "" : "s"} ·{" "}
                  <Time iso={run.breakerChangedAt} mode="relative" />
                </>
              ) : null}
            </span>
          </div>
        </div>
        <RunControls
          runId={run.runId}
          lifecycle={run.lifecycle}
          breaker={run.breaker}
          can={can}
          descendants={descendants}
          pausePolicy={d.pausePolicy}
          root={run.parentRunId === null}
        />
      </header>

      {latest ? <BarrierPanel barrierId={latest.id} live={latest.phase !== "complete"} /> : null}

      <RunEnvironmentPanel env={d.environment ?? null} labels={d.labels} />

      <section aria-labelledby="tree-title" className="card">
        <h2 id="tree-title">
          Run tree{" "}
          <span className="muted">
            ({d.tree.length}
            {d.treeTruncated ? "+" : ""} runs)
          </span>
        </h2>
        <TreeTable nodes={d.tree} focal={run.runId} />
      </section>

      <div className="grid-2">
        <section aria-labelledby="inflight-title" className="card">
          <h2 id="inflight-title">
            In-flight calls <span className="muted">({d.inFlight.length})</span>
          </h2>
          <p className="muted small">
            Queued {d.pending.queued} · scheduled {d.pending.scheduled} · of which retries {d.pending.retry}
          </p>
          {d.inFlight.length === 0 ? (
            <EmptyState title="Nothing in flight" />
          ) : (
            <DataTable
              scrollLabel="In-flight calls (table)"
              className="table compact"
              columns={["Tool", "Operation", "Started", "Heartbeat age", "Provider job"]}
            >
              {d.inFlight.map((o) => (
                <tr key={o.id}>
                  <td className="mono">{o.tool}</td>
                  <td className="mono" title={o.operationId}>
                    {o.operationId.length > 24 ? `${o.operationId.slice(0, 24)}…` : o.operationId}
                    <div className="sub">
                      running{o.kind === "call" ? "" : ` (registered as ${human(o.kind)} work)`} · epoch {o.epochStamp}
                      {o.runId !== run.runId ? <> · run {shortId(o.runId)}</> : null}
                    </div>
                  </td>
                  <td>
                    <Time iso={o.startedAt} mode="relative" />
                  </td>
                  <td>
                    <HeartbeatAge iso={o.lastHeartbeatAt} />
                  </td>
                  <td className="mono wrap-any">
                    {o.providerName ? `${o.providerName}${o.providerJobId ? ` / ${o.providerJobId}` : ""}` : "—"}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </section>
        <section aria-labelledby="uncertain-title" className="card">
          <h2 id="uncertain-title">
            Uncertain intervals <span className="muted">({d.uncertain.length})</span>
          </h2>
          {d.uncertain.length === 0 ? (
            <EmptyState title="No uncertainty recorded">The truth about every operation of this tree has been known throughout.</EmptyState>
          ) : (
            <UncertainTimeline items={d.uncertain} labels={d.labels} />
          )}
        </section>
      </div>

      <section aria-labelledby="decisions-title" className="card">
        <h2 id="decisions-title">
          Gate decisions <span className="muted">(latest {d.decisions.length})</span>
        </h2>
        {d.decisions.length === 0 ? (
          <EmptyState title="No gate decisions yet">
            Every call the run makes through an SDK, hook or gateway is decided and recorded here.
          </EmptyState>
        ) : (
          <DataTable
            scrollLabel="Gate decisions (table)"
            className="table compact"
            columns={[
              "At",
              "Decision",
              "Reason",
              "Source",
              "Operation",
              "Run",
              { key: "epoch", label: "Epoch seen / current", className: "num" },
            ]}
          >
            {d.decisions.map((g) => (
              <tr key={g.id}>
                <td>
                  <Time iso={g.at} />
                </td>
                <td>
                  <DecisionBadge value={g.decision} />
                </td>
                <td className="mono">{g.reason}</td>
                <td>{g.source}</td>
                <td className="mono" title={g.operationId ?? ""}>
                  {g.operationId ? (g.operationId.length > 22 ? `${g.operationId.slice(0, 22)}…` : g.operationId) : "—"}
                </td>
                <td className="mono">{g.runId === run.runId ? "this run" : <Link href={`/runs/${g.runId}`}>{shortId(g.runId)}</Link>}</td>
                <td className="num">
                  {g.epochSeen ?? "—"} / {g.currentEpoch ?? "—"}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>

      {d.barriers.length > 0 ? (
        <section aria-labelledby="barriers-title" className="card">
          <h2 id="barriers-title">
            <Term id="barrier">Barriers</Term> of this tree
          </h2>
          <ul className="plain-list">
            {d.barriers.map((b) => (
              <li key={b.id}>
                <Link href={`/barriers/${b.id}`} className="mono">
                  {b.id}
                </Link>{" "}
                <PhaseBadge value={b.phase} /> {b.decision ? <ReceiptDecisionBadge value={b.decision} /> : null} requested{" "}
                <Time iso={b.requestedAt} /> by {d.labels[b.requestedBy] ?? b.requestedBy}
                {b.completedAt ? (
                  <>
                    {" "}
                    · <Link href={`/receipts/${b.id}`}>receipt</Link>
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <RunTimeline runId={run.runId} labels={d.labels} />
    </article>
  );
}

/** How long the pause may still last before the barrier engine reclaims it (shown only when the team configured reclaim). */
function PauseReclaim({ since, policy }: { since: string; policy: { seconds: number; action: string } }) {
  const at = new Date(new Date(since).getTime() + policy.seconds * 1000).toISOString();
  const action = policy.action === "kill" ? "killed" : `reclaimed (${human(policy.action)})`;
  return (
    <span className="tag tag-warn" title={`team pause policy: ${policy.seconds} s`}>
      {action} <Time iso={at} mode="relative" /> if still paused
    </span>
  );
}

function HeartbeatAge({ iso }: { iso: string | null }) {
  const now = useNow();
  if (!iso) return <span className="muted">none</span>;
  const stale = now !== null && now - new Date(iso).getTime() > 60_000;
  return (
    <span className={stale ? "text-warn" : undefined}>
      <Time iso={iso} mode="relative" />
      {stale ? " (stale)" : ""}
    </span>
  );
}

function countDescendants(nodes: TreeNode[], id: string): number {
  const kids = new Map<string, string[]>();
  for (const n of nodes) if (n.parentRunId) kids.set(n.parentRunId, [...(kids.get(n.parentRunId) ?? []), n.runId]);
  let count = 0;
  const stack = [...(kids.get(id) ?? [])];
  while (stack.length) {
    const c = stack.pop()!;
    count++;
    stack.push(...(kids.get(c) ?? []));
  }
  return count;
}

/** Depth-first order so every child sits under its parent. */
function ordered(nodes: TreeNode[]): TreeNode[] {
  const kids = new Map<string | null, TreeNode[]>();
  const ids = new Set(nodes.map((n) => n.runId));
  for (const n of nodes) {
    const parent = n.parentRunId && ids.has(n.parentRunId) ? n.parentRunId : null;
    kids.set(parent, [...(kids.get(parent) ?? []), n]);
  }
  const out: TreeNode[] = [];
  const walk = (p: string | null) => {
    for (const n of kids.get(p) ?? []) {
      out.push(n);
      walk(n.runId);
    }
  };
  walk(null);
  return out;
}

function LeaseCell({ lease }: { lease: TreeNode["lease"] }) {
  const now = useNow();
  if (!lease) return <span className="muted">no lease</span>;
  if (lease.revokedAt)
    return (
      <span className="text-danger" title={`revoked by ${lease.revokedBy ?? "?"}`}>
        revoked <Time iso={lease.revokedAt} mode="relative" />
      </span>
    );
  const expired = now !== null && new Date(lease.validUntil).getTime() <= now;
  return expired ? (
    <span className="text-warn">
      expired <Time iso={lease.validUntil} mode="relative" />
    </span>
  ) : (
    <span>
      valid, expires <Time iso={lease.validUntil} mode="relative" />
    </span>
  );
}

function TreeTable({ nodes, focal }: { nodes: TreeNode[]; focal: string }) {
  return (
    <TableScroll label="Runs of this tree (table)">
      <table className="table compact tree">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Activity</th>
            <th scope="col">Lifecycle</th>
            <th scope="col">Breaker</th>
            <th scope="col" className="num">
              <Term id="epoch">Epoch</Term>
            </th>
            <th scope="col">
              <Term id="lease">Lease</Term>
            </th>
            <th scope="col" className="num">
              In flight
            </th>
            <th scope="col">Last heard from</th>
          </tr>
        </thead>
        <tbody>
          {ordered(nodes).map((n) => (
            <tr key={n.runId} className={n.runId === focal ? "row-focal" : undefined} aria-current={n.runId === focal ? "true" : undefined}>
              <td style={{ paddingLeft: `${0.6 + n.depth * 1.25}rem` }}>
                {n.depth > 0 ? (
                  <span className="tree-elbow" aria-hidden>
                    └{" "}
                  </span>
                ) : null}
                {n.runId === focal ? <strong>{n.title ?? n.taskId}</strong> : <Link href={`/runs/${n.runId}`}>{n.title ?? n.taskId}</Link>}
                <span className="sub mono">
                  {" "}
                  {shortId(n.runId)} · {human(n.harness)}
                </span>
              </td>
              <td>
                <ActivityBadge value={n.activity} />
              </td>
              <td>
                <LifecycleBadge value={n.lifecycle} />
              </td>
              <td>
                <BreakerBadge value={n.breaker} />
              </td>
              <td className="num">{n.epoch}</td>
              <td>
                <LeaseCell lease={n.lease} />
              </td>
              <td className="num">{n.running}</td>
              <td>
                <Time iso={n.lastHeardAt} mode="relative" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function BarrierPanel({ barrierId, live }: { barrierId: string; live: boolean }) {
  const q = useQuery({
    queryKey: ["barrier", barrierId],
    queryFn: () => getJson<BarrierViewData>(`/api/console/barriers/${barrierId}`),
    refetchInterval: live ? 2000 : false,
  });
  if (!q.data) return null;
  const b = q.data;
  return (
    <section aria-labelledby="barrier-title" className={`card barrier-card ${b.phase === "complete" ? "" : "barrier-live"}`}>
      <div className="card-head">
        <h2 id="barrier-title">
          {barrierHeading(b.phase, b.decision)} — barrier{" "}
          <Link href={`/barriers/${b.id}`} className="mono">
            {shortId(b.id)}
          </Link>
        </h2>
        <PhaseBadge value={b.phase} />
        {b.decision ? <ReceiptDecisionBadge value={b.decision} /> : null}
        {b.receipts.length ? (
          <Link className="btn btn-small btn-primary" href={`/receipts/${b.id}`}>
            Open stop receipt
          </Link>
        ) : null}
      </div>
      <Ladder rungs={b.ladder} startedAt={b.requestedAt} />
    </section>
  );
}

/** The harness's own names for this run (docs/architecture.md#data): what an operator types into the harness to find it. */
function NativeIdentities({ run }: { run: Pick<RunViewData["run"], "native" | "lastNativeState"> }) {
  const ids: [string, string | null][] = [
    ["session", run.native.sessionId],
    ["agent", run.native.agentId],
    ["thread", run.native.threadId],
    ["turn", run.native.turnId],
    ["last native state", run.lastNativeState],
  ];
  const shown = ids.filter((x): x is [string, string] => !!x[1]);
  if (shown.length === 0) return null;
  return (
    <div className="meta" aria-label="native identities">
      {shown.map(([label, value]) => (
        <span key={label}>
          {label} <span className="mono">{value}</span>
        </span>
      ))}
    </div>
  );
}
