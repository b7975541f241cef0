// "Observed by target" (docs/architecture.md#the-cancellation-barrier; docs/ideas.md#five-questions: "Record
// what the acknowledgment actually means"):
// a harness adapter reports that the execution it controls saw the cancellation — signal_accepted,
// turn_interrupted or process_terminated. Recorded on the barrier covering the run as a ladder rung;
// every acknowledgment is kept, and the rung shows the strongest meaning (never upgraded by inference).
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound, QuiesceError } from "../../platform/errors";
import { strongerMeaning, type ObservedMeaning } from "../../control/barrier";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { notifyControl } from "../../platform/db/notify";
import { coveringBarrierTx } from "./settlements";
import { lockBarrierTx, reissueCoveringTx } from "./internal/receipts";
import { coveringBarriersTx } from "./internal/evidence";
import { assertHolder } from "../runs/holder";
import { asEnvironmentEvidence } from "../../control/evidence/environment";

export async function recordObserved(
  p: Principal,
  runId: string,
  input: { meaning: ObservedMeaning; evidence?: Record<string, unknown>; leaseId?: string },
) {
  authorize(p, "operation.report");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true, rootRunId: true, path: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  // Only the harness that holds the run can say its target saw the cancellation.
  await assertHolder(prisma(), p, { teamId: run.teamId, path: run.path }, input.leaseId, "report what its target observed");
  // A supervisor's evidence (docs/evidence.md#the-environment) changes what every covering barrier's receipt says.
  const environment = asEnvironmentEvidence(input.evidence?.environment);
  return prisma().$transaction(async (tx) => {
    const covering = await coveringBarrierTx(tx, runId);
    if (!covering) throw new QuiesceError("conflict", "no cancellation barrier covers this run (it was not killed)");
    // Oldest first, the order every writer of several barriers of a tree uses.
    if (environment) for (const c of await coveringBarriersTx(tx, runId)) await lockBarrierTx(tx, c.id);
    await lockBarrierTx(tx, covering.id);
    const b = await tx.barrier.findUniqueOrThrow({
      where: { id: covering.id },
      select: { observedAt: true, observedMeaning: true, observedEvidence: true },
    });
    const at = new Date();
    const acks = Array.isArray(b.observedEvidence) ? (b.observedEvidence as unknown[]) : [];
    const ack = { runId, meaning: input.meaning, at: at.toISOString(), by: actorOf(p), evidence: input.evidence ?? null };
    const meaning = strongerMeaning((b.observedMeaning as ObservedMeaning | null) ?? null, input.meaning);
    await tx.barrier.update({
      where: { id: covering.id },
      data: { observedAt: b.observedAt ?? at, observedMeaning: meaning, observedEvidence: [...acks, ack].slice(-50) as never },
    });
    // The run's last state as its harness observed it (shown on the run page).
    await tx.run.update({ where: { id: runId }, data: { lastNativeState: input.meaning } });
    await appendAudit(tx, { teamId: run.teamId, actor: actorOf(p), action: "barrier.observed", target: covering.id, after: ack });
    if (environment) {
      // The run's environment: the latest report is kept (a run reporting without a marker was supervised all the same).
      await tx.$executeRawUnsafe(
        `INSERT INTO run_environments (run_id, team_id, mechanism, weakest, grace_ms, supervised_by, container, live_processes, frozen, status_at,
                                       evidence, evidence_at, evidence_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false, $9, $10::jsonb, $9, $6)
         ON CONFLICT (run_id) DO UPDATE SET container = coalesce(run_environments.container, EXCLUDED.container),
                live_processes = EXCLUDED.live_processes, frozen = false, status_at = EXCLUDED.status_at,
                evidence = EXCLUDED.evidence, evidence_at = EXCLUDED.evidence_at, evidence_by = EXCLUDED.evidence_by`,
        runId,
        run.teamId,
        environment.mechanism,
        environment.weakest,
        Math.max(0, Math.round(Number(environment.graceMs) || 0)),
        actorOf(p),
        environment.container,
        Math.max(environment.processes.filter((x) => x.ended === "not_ended").length, environment.survivors.length),
        at,
        JSON.stringify(environment),
      );
      // A receipt already issued (the report came after the quiet period) gets its next version.
      await reissueCoveringTx(tx, runId, actorOf(p));
    }
    await notifyControl(tx, { kind: "barrier", teamId: run.teamId, rootRunId: run.rootRunId, barrierId: covering.id });
    return { barrierId: covering.id, runId, meaning, observedAt: (b.observedAt ?? at).toISOString() };
  });
}
