// The gate's own breaker transition (open → half_open when it admits the probe) is decided inside the
// gate's single SQL statement; the gate reports which runs it claimed and this writes their audit
// rows, so every breaker transition is in the audit chain. Internal: called by lib/gate only.
import "server-only";
import { prisma } from "../../db/prisma";
import { appendAudit } from "../audit";
import { notifyControl } from "./notify";

export async function auditGateProbeClaims(runIds: readonly string[], operationId: string, source: string): Promise<void> {
  if (runIds.length === 0) return;
  await prisma().$transaction(async (tx) => {
    const runs = await tx.run.findMany({
      where: { id: { in: [...runIds] } },
      select: { id: true, teamId: true, rootRunId: true, breakerFailures: true },
    });
    for (const r of runs) {
      await appendAudit(tx, {
        teamId: r.teamId,
        actor: "system:gate",
        action: "breaker.probe_admitted",
        target: r.id,
        before: { breaker: "open" },
        after: { breaker: "half_open", failures: r.breakerFailures, probeOperationId: operationId, source },
      });
    }
    const first = runs[0];
    if (first)
      await notifyControl(tx, { kind: "breaker", teamId: first.teamId, rootRunId: first.rootRunId, runIds: runs.map((r) => r.id) });
  });
}
