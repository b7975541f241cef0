// Read model for the run page: the whole tree the run belongs to (every node with lifecycle, breaker,
// lease validity and epoch), in-flight calls, uncertain intervals, recent gate decisions and the
// barriers of the tree. Another team's run answers 404, exactly like a missing one.
import "server-only";
import type { RunEnvironmentView } from "../environment";
import { prisma } from "../../../platform/db/prisma";
import { notFound } from "../../../platform/errors";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import type { OperationState } from "../../../control/types";
import { consoleTeam } from "../../../platform/auth/console-team";
import type { Lease, RunSummary } from "../../../schemas/runs";
import { runState, runSummary, type RunState } from "../internal/read-shapes";
import { readActivity, type RunActivityView } from "../internal/activity-sql";
import { asEnvironmentEvidence, environmentMeaning } from "../../../control/evidence/environment";

/**
 * A node of the run's tree: the run's one read shape (RunSummary and RunView's state fields, as
 * GET /api/v1/runs/{id} serves them) and what the page adds — its latest lease's validity and its
 * activity (running calls, when last heard from). The lease id is left out: it is a capability (docs/security/authorization.md#holders).
 */
export type TreeNode = RunSummary &
  Omit<RunState, "native"> & {
    lease: Pick<Lease, "validUntil" | "revokedAt" | "revokedBy"> | null;
  } & RunActivityView;

export interface InFlightCall {
  id: string;
  operationId: string;
  runId: string;
  tool: string;
  kind: string;
  epochStamp: number;
  startedAt: string | null;
  lastHeartbeatAt: string | null;
  providerName: string | null;
  providerJobId: string | null;
}

export interface UncertainRow {
  id: string;
  runId: string;
  operationId: string;
  tool: string;
  cause: string;
  startedAt: string;
  endedAt: string | null;
  resolution: string | null;
  /** Who ended it by resolving the operation's reconciliation (actor string), if a person did. */
  resolvedBy: string | null;
}
export interface DecisionRow {
  id: string;
  runId: string;
  operationId: string | null;
  source: string;
  decision: string;
  reason: string;
  epochSeen: number | null;
  currentEpoch: number | null;
  at: string;
}
export interface BarrierRef {
  id: string;
  runId: string;
  phase: string;
  requestedAt: string;
  requestedBy: string;
  reason: string;
  decision: string | null;
  completedAt: string | null;
}

/**
 * The run's environment (docs/environment.md): whether a supervisor holds it, its latest live report,
 * and after a stop what its supervisor proved. Null: no supervisor — nothing is known about its processes.
 */
export interface RunEnvironmentDetail extends Omit<RunEnvironmentView, "runId" | "supervised"> {
  /** After a stop: the supervisor's evidence (null while none arrived). */
  stop: {
    verifiedEmpty: boolean;
    emptyAt: string | null;
    reportedAt: string | null;
    reattached: boolean;
    processes: { pid: number; command: string; ended: string; endedAt: string | null }[];
    survivors: number[];
  } | null;
  /** Nobody could verify it empty: since when, and who owns that question. */
  unknownSince: string | null;
  owner: string | null;
  /** A person's check that closed the unknown (actor string; the page resolves it to a person). */
  resolvedBy: string | null;
  resolvedAt: string | null;
}

export interface RunDetail {
  run: TreeNode & Pick<RunState, "native">;
  tree: TreeNode[];
  treeTruncated: boolean;
  inFlight: InFlightCall[];
  pending: { queued: number; scheduled: number; retry: number };
  uncertain: UncertainRow[];
  decisions: DecisionRow[];
  barriers: BarrierRef[];
  environment: RunEnvironmentDetail | null;
  /** The team's pause policy: a pause that lasts longer is reclaimed by this action; null = reclaim is off. */
  pausePolicy: { seconds: number; action: string } | null;
  /** A restart on settled ground (docs/evidence.md#restart): the killed root this run continues, and the run that continues this one. */
  restart: { from: string | null; fromDigest: string | null; as: string | null };
}

const TREE_LIMIT = 500;
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** Cheap existence + team check used by the run layout, so a 404 is decided before the page streams. */
export async function assertRunVisible(p: Principal, runId: string): Promise<void> {
  authorize(p, "run.read");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true } });
  if (!run || run.teamId !== consoleTeam(p)) throw notFound("run");
}

export async function getRunDetail(p: Principal, runId: string): Promise<RunDetail> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const db = prisma();
  const focal = await db.run.findUnique({ where: { id: runId } });
  if (!focal || focal.teamId !== teamId) throw notFound("run");

  const treeRows = await db.run.findMany({
    where: { teamId, rootRunId: focal.rootRunId },
    orderBy: [{ depth: "asc" }, { createdAt: "asc" }],
    take: TREE_LIMIT + 1,
    include: { leases: { orderBy: { createdAt: "desc" }, take: 1 } },
  });
  const treeTruncated = treeRows.length > TREE_LIMIT;
  const rows = treeRows.slice(0, TREE_LIMIT);
  if (!rows.some((r) => r.id === focal.id)) rows.push({ ...focal, leases: [] } as (typeof rows)[number]);
  const now = Date.now();
  const activity = await readActivity(
    teamId,
    rows.map((r) => r.id),
    now,
  );
  const node = (r: (typeof rows)[number]): TreeNode => {
    const { native: _native, ...state } = runState(r);
    const lease = r.leases[0];
    return {
      ...runSummary(r, now),
      ...state,
      lease: lease ? { validUntil: lease.validUntil.toISOString(), revokedAt: iso(lease.revokedAt), revokedBy: lease.revokedBy } : null,
      // A run deleted between the two reads cannot happen (nothing deletes runs); the fallback keeps the type honest.
      ...(activity.get(r.id) ?? { activity: "stale", lastHeardAt: r.createdAt.toISOString(), running: 0 }),
    };
  };
  const tree = rows.map(node);
  const ids = tree.map((n) => n.runId);

  const [inFlight, pendingGroups, uncertain, decisions, barriers] = await Promise.all([
    db.operation.findMany({ where: { teamId, runId: { in: ids }, state: "running" }, orderBy: { startedAt: "asc" }, take: 200 }),
    db.operation.groupBy({
      by: ["state"],
      where: { teamId, runId: { in: ids }, state: { in: ["queued", "scheduled"] } },
      _count: { _all: true },
    }),
    db.uncertainInterval.findMany({
      where: { teamId, runId: { in: ids } },
      orderBy: { startedAt: "asc" },
      take: 200,
      include: { operation: { select: { operationId: true, tool: true, reconciliation: { select: { status: true, resolvedBy: true } } } } },
    }),
    db.gateDecision.findMany({ where: { teamId, runId: { in: ids } }, orderBy: { id: "desc" }, take: 50 }),
    db.barrier.findMany({ where: { teamId, runId: { in: ids } }, orderBy: { requestedAt: "desc" }, take: 20 }),
  ]);
  const team = await db.team.findUnique({ where: { id: teamId }, select: { pausePolicySeconds: true, pauseReclaimAction: true } });
  const env = await db.runEnvironment.findUnique({ where: { runId: focal.id }, include: { owner: { select: { email: true } } } });
  const ev = env ? asEnvironmentEvidence(env.evidence) : null;
  const retry = await db.operation.count({ where: { teamId, runId: { in: ids }, kind: "retry", state: { in: ["queued", "scheduled"] } } });
  const count = (s: OperationState) => pendingGroups.find((g) => g.state === s)?._count._all ?? 0;

  const focalNode = tree.find((n) => n.runId === focal.id)!;
  return {
    run: { ...focalNode, native: runState(focal).native },
    tree,
    treeTruncated,
    inFlight: inFlight.map((o) => ({
      id: o.id,
      operationId: o.operationId,
      runId: o.runId,
      tool: o.tool,
      kind: o.kind,
      epochStamp: o.epochStamp,
      startedAt: iso(o.startedAt),
      lastHeartbeatAt: iso(o.lastHeartbeatAt),
      providerName: o.providerName,
      providerJobId: o.providerJobId,
    })),
    pending: { queued: count("queued"), scheduled: count("scheduled"), retry },
    uncertain: uncertain.map((u) => ({
      id: u.id,
      runId: u.runId,
      operationId: u.operation.operationId,
      tool: u.operation.tool,
      cause: u.cause,
      startedAt: u.startedAt.toISOString(),
      endedAt: iso(u.endedAt),
      resolution: u.resolution,
      resolvedBy: u.endedAt && u.operation.reconciliation?.status === "resolved" ? u.operation.reconciliation.resolvedBy : null,
    })),
    decisions: decisions.map((d) => ({
      id: d.id.toString(),
      runId: d.runId,
      operationId: d.operationId,
      source: d.source,
      decision: d.decision,
      reason: d.reason,
      epochSeen: d.epochSeen,
      currentEpoch: d.currentEpoch,
      at: d.at.toISOString(),
    })),
    environment: env
      ? {
          mechanism: env.mechanism,
          weakest: env.weakest,
          graceMs: env.graceMs,
          supervisedAt: env.supervisedAt.toISOString(),
          container: env.container,
          liveProcesses: env.liveProcesses,
          frozen: env.frozen,
          statusAt: iso(env.statusAt),
          stop: ev
            ? {
                verifiedEmpty: environmentMeaning(ev) === "process_terminated",
                emptyAt: ev.emptyAt,
                reportedAt: iso(env.evidenceAt),
                reattached: ev.reattached,
                processes: ev.processes.map((x) => ({ pid: x.pid, command: x.cmdline, ended: x.ended, endedAt: x.endedAt })),
                survivors: ev.survivors,
              }
            : null,
          unknownSince: iso(env.unknownSince),
          owner: env.owner?.email ?? env.ownerUserId,
          resolvedBy: env.resolvedBy,
          resolvedAt: iso(env.resolvedAt),
        }
      : null,
    pausePolicy: team?.pausePolicySeconds != null ? { seconds: team.pausePolicySeconds, action: team.pauseReclaimAction } : null,
    restart: {
      from: focal.restartedFromRunId,
      fromDigest: focal.restartedFromDigest,
      as: (await db.run.findUnique({ where: { restartedFromRunId: focal.id }, select: { id: true } }))?.id ?? null,
    },
    barriers: barriers.map((b) => ({
      id: b.id,
      runId: b.runId,
      phase: b.phase,
      requestedAt: b.requestedAt.toISOString(),
      requestedBy: b.requestedBy,
      reason: b.reason,
      decision: b.decision,
      completedAt: iso(b.completedAt),
    })),
  };
}
