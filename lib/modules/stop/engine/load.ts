// A barrier's work as one engine reads it to drive it alone: its row, its settlements with their
// operations, and the providers to talk to (docs/architecture.md#the-cancellation-barrier).
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import type { Principal } from "../../../platform/auth/principal";
import type { ProviderConfig } from "../providers/types";
import type { ProviderResponse } from "../../../control/settlement";
import { system } from "./shared";

export interface WorkSettlement {
  id: string;
  operationRowId: string;
  operationId: string;
  runId: string;
  tool: string;
  providerName: string | null;
  providerJobId: string | null;
  cancelRequestedAt: Date | null;
  providerResponse: ProviderResponse | null;
  settledState: string | null;
  attempts: number;
}
export interface BarrierWork {
  id: string;
  teamId: string;
  runId: string;
  phase: string;
  requestedAt: Date;
  quietUntil: Date | null;
  settlements: WorkSettlement[];
  providers: Record<string, ProviderConfig>;
}

export async function loadBarrierWork(p: Principal, barrierId: string): Promise<BarrierWork | null> {
  system(p);
  const b = await prisma().barrier.findUnique({
    where: { id: barrierId },
    include: { settlements: { include: { operation: true }, orderBy: { id: "asc" } } },
  });
  if (!b) return null;
  const names = [...new Set(b.settlements.map((s) => s.operation.providerName).filter((n): n is string => !!n))];
  const rows = names.length ? await prisma().provider.findMany({ where: { teamId: b.teamId, name: { in: names } } }) : [];
  return {
    id: b.id,
    teamId: b.teamId,
    runId: b.runId,
    phase: b.phase,
    requestedAt: b.requestedAt,
    quietUntil: b.quietUntil,
    settlements: b.settlements.map((s) => ({
      id: s.id,
      operationRowId: s.operation.id,
      operationId: s.operation.operationId,
      runId: s.operation.runId,
      tool: s.operation.tool,
      providerName: s.operation.providerName,
      providerJobId: s.operation.providerJobId,
      cancelRequestedAt: s.cancelRequestedAt,
      providerResponse: s.providerResponse,
      settledState: s.settledState,
      attempts: s.attempts,
    })),
    providers: Object.fromEntries(
      rows.map((r) => [
        r.name,
        {
          name: r.name,
          kind: r.kind,
          cancelUrl: r.cancelUrl,
          statusUrl: r.statusUrl,
          timeoutMs: r.timeoutMs,
          settleDeadlineMs: r.settleDeadlineMs,
          quietPeriodSeconds: r.quietPeriodSeconds,
          rollbackOwner: r.rollbackOwner,
          endpoint: r.endpoint,
        },
      ]),
    ),
  };
}
