// Read model for the runs list: lifecycle and breaker as separate fields, harness, task,
// age, last heartbeat; filters, search and pagination. Team-scoped by construction: the where clause
// always carries the principal's team, so another team's runs are never counted or returned.
import "server-only";
import { prisma } from "../../db/prisma";
import type { Prisma } from "../../generated/prisma/client";
import { authorize } from "../authorize";
import type { Principal } from "../principal";
import type { BreakerState, Harness, Lifecycle } from "../../control/types";
import { consoleTeam } from "./team";
import { runSearchWhere } from "../internal/run-search";

export interface RunRow {
  id: string;
  title: string | null;
  taskId: string;
  harness: Harness;
  lifecycle: Lifecycle;
  lifecycleChangedAt: string;
  lifecycleReason: string | null;
  breaker: BreakerState;
  breakerChangedAt: string;
  epoch: number;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  childCount: number;
  running: number;
  createdAt: string;
  lastHeartbeatAt: string | null;
  isDrill: boolean;
}

export interface RunsFilter {
  lifecycle?: Lifecycle;
  breaker?: BreakerState;
  harness?: Harness;
  q?: string;
  /** Only tree roots (children are shown on the run page). */
  rootsOnly?: boolean;
  page?: number;
  pageSize?: number;
}

export interface RunsPage {
  items: RunRow[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
}

export async function listConsoleRuns(p: Principal, filter: RunsFilter): Promise<RunsPage> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const pageSize = Math.min(Math.max(filter.pageSize ?? 25, 5), 100);
  const page = Math.max(filter.page ?? 1, 1);
  const where: Prisma.RunWhereInput = {
    teamId,
    ...(filter.lifecycle ? { lifecycle: filter.lifecycle } : {}),
    ...(filter.breaker ? { breaker: filter.breaker } : {}),
    ...(filter.harness ? { harness: filter.harness } : {}),
    ...(filter.rootsOnly ? { parentRunId: null } : {}),
    ...runSearchWhere(filter.q),
  };
  const [total, rows] = await prisma().$transaction([
    prisma().run.count({ where }),
    prisma().run.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: (page - 1) * pageSize,
      take: pageSize,
      include: { _count: { select: { children: true, operations: { where: { state: "running" } } } } },
    }),
  ]);
  return {
    total,
    page,
    pageSize,
    pages: Math.max(1, Math.ceil(total / pageSize)),
    items: rows.map((r) => ({
      id: r.id,
      title: r.title,
      taskId: r.taskId,
      harness: r.harness as Harness,
      lifecycle: r.lifecycle as Lifecycle,
      lifecycleChangedAt: r.lifecycleChangedAt.toISOString(),
      lifecycleReason: r.lifecycleReason,
      breaker: r.breaker as BreakerState,
      breakerChangedAt: r.breakerChangedAt.toISOString(),
      epoch: r.epoch,
      parentRunId: r.parentRunId,
      rootRunId: r.rootRunId,
      depth: r.depth,
      childCount: r._count.children,
      running: r._count.operations,
      createdAt: r.createdAt.toISOString(),
      lastHeartbeatAt: r.lastHeartbeatAt?.toISOString() ?? null,
      isDrill: r.isDrill,
    })),
  };
}
