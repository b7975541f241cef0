// The settling step's durable writes, one settlement at a time (the provider conversation is in
// settle-one.ts): the cancel request's time, each round's answer and check, and the settlement itself.
// Conditional, so an engine that takes over continues from them.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import type { Principal } from "../../../platform/auth/principal";
import type { ProviderResponse, EffectObservation } from "../../../control/settlement";
import { notifyControl } from "../../../platform/db/notify";
import { settleTx, type SettleInput } from "../settlements";
import { system } from "./shared";

export async function settlementState(p: Principal, settlementId: string): Promise<string | null> {
  system(p);
  const s = await prisma().settlement.findUnique({ where: { id: settlementId }, select: { settledState: true } });
  return s?.settledState ?? null;
}

/** Records the intent before the call leaves, so a resumed engine counts the deadline from the first request. */
export async function markCancelRequested(p: Principal, settlementId: string): Promise<Date> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ at: Date }[]>(
    `UPDATE settlements SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()) WHERE id = $1 RETURNING cancel_requested_at AS at`,
    settlementId,
  );
  return rows[0]!.at;
}

/** One round of talking to the provider: the cancel answer (when one was asked) and the effect check. */
export async function recordRound(
  p: Principal,
  settlementId: string,
  round: {
    cancel?: { response: ProviderResponse; detail: unknown };
    check: { observed: EffectObservation; detail: unknown };
  },
): Promise<void> {
  system(p);
  const err =
    round.check.observed === "unavailable" ? round.check.detail : round.cancel?.response === "unreachable" ? round.cancel.detail : null;
  await prisma().settlement.update({
    where: { id: settlementId },
    data: {
      ...(round.cancel ? { providerResponse: round.cancel.response, providerRespondedAt: new Date() } : {}),
      effectObserved: round.check.observed,
      effectCheckedAt: new Date(),
      effectCheckDetail: (round.check.detail ?? undefined) as never,
      attempts: { increment: 1 },
      lastError: err === null ? null : JSON.stringify(err ?? null).slice(0, 1000),
    },
  });
}

export async function settleBySystem(p: Principal, barrierId: string, input: Omit<SettleInput, "onlyIfPending">): Promise<boolean> {
  system(p);
  return prisma().$transaction(async (tx) => {
    const ok = await settleTx(tx, { ...input, onlyIfPending: true });
    if (!ok) return false;
    // last_settled_at is written when the barrier goes quiet: no per-settlement write on the hot barrier row.
    const b = await tx.barrier.findUniqueOrThrow({
      where: { id: barrierId },
      select: { teamId: true, run: { select: { rootRunId: true } } },
    });
    await notifyControl(tx, { kind: "settlement", teamId: b.teamId, rootRunId: b.run.rootRunId, barrierId });
    return true;
  });
}
