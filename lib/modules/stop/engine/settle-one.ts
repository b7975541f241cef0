// Settling one in-flight operation (docs/architecture.md#the-cancellation-barrier steps 1–3): ask the provider to cancel, check the
// authoritative effect until the provider's settle deadline, and let lib/control/settlement decide.
// Resumable: the cancel request time, the provider's answer and every check are durable, so an engine
// that takes over continues from them (re-asking a provider to cancel is harmless; a cancel is idempotent).
import "server-only";
import { decideSettlement, nextCheckDelayMs, type ProviderResponse, type SettlementVerdict } from "../../../control/settlement";
import { providerFor } from "../providers/http";
import type { EffectAnswer, ProviderConfig, ProviderOperationRef } from "../providers/types";
import { markCancelRequested, recordRound, settleBySystem, settlementState } from "./settle";
import type { WorkSettlement } from "./load";
import type { Principal } from "../../../platform/auth/principal";
import { sleep } from "../../../platform/wait";

export interface SettleContext {
  principal: Principal;
  barrierId: string;
  teamId: string;
  requestedAt: Date;
  /** Operations without a provider: how long to wait for the executor's own report. */
  localSettleMs: number;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** What the system holding the work said about it (`detail.said`, an MCP server's or A2A agent's task state, and why that settles as it does). */
function said(check: EffectAnswer | null): string {
  const d = (check?.detail ?? {}) as { said?: unknown; reason?: unknown };
  if (typeof d.said !== "string") return "";
  return `: ${[d.said, d.reason].filter((x): x is string => typeof x === "string").join("; ")}`;
}

/** Waits end quietly when the engine stops; the caller re-checks its signal. */
const pause = (ms: number, stop: AbortSignal) => sleep(ms, undefined, stop);

async function write(
  ctx: SettleContext,
  s: WorkSettlement,
  v: SettlementVerdict & { kind: "settle" },
  check: EffectAnswer | null,
  rollbackOwner: string | null,
) {
  const at = new Date();
  const ok = await settleBySystem(ctx.principal, ctx.barrierId, {
    settlementId: s.id,
    teamId: ctx.teamId,
    state: v.state,
    at,
    // What the provider's system said (an MCP server's or A2A agent's task state) names who answered.
    reason:
      (v.state === "unknown"
        ? `unknown: ${v.cause}`
        : v.state === "completed_and_verified"
          ? `effect present (${v.source})`
          : "provider stopped; effect proven absent") + said(check),
    ...(v.state === "unknown" ? { cause: v.cause } : {}),
    ...(v.state === "completed_and_verified" && check
      ? {
          effect: {
            providerOperationId: check.providerOperationId ?? s.providerJobId,
            committedAt: check.committedAt ? new Date(check.committedAt) : at,
            detail: check.detail ?? null,
            rollbackOwner,
            source: "provider" as const,
          },
        }
      : {}),
  });
  ctx.log(`${s.operationId}: ${ok ? v.state : "already settled elsewhere"}`);
}

export async function settleOne(ctx: SettleContext, s: WorkSettlement, provider: ProviderConfig | undefined): Promise<void> {
  if (s.settledState !== null) return;
  if (!provider) {
    // A plain tool call (or a queue job without a providers row): nobody can be asked, and what the
    // executor claims afterwards (recordLateReport) settles nothing: at the deadline it is unknown, for a person.
    const deadline = ctx.requestedAt.getTime() + ctx.localSettleMs;
    while (!ctx.signal.aborted) {
      if ((await settlementState(ctx.principal, s.id)) !== null) return;
      const v = decideSettlement({
        hasProvider: false,
        providerResponse: null,
        check: null,
        executorClaim: null,
        deadlinePassed: Date.now() >= deadline,
      });
      if (v.kind === "settle") return write(ctx, s, v, null, null);
      await pause(Math.min(500, deadline - Date.now()), ctx.signal);
    }
    return;
  }
  const client = providerFor(provider);
  const ref: ProviderOperationRef = { operationId: s.operationId, providerJobId: s.providerJobId, runId: s.runId, tool: s.tool };
  const requestedAt = s.cancelRequestedAt ?? (await markCancelRequested(ctx.principal, s.id));
  const deadline = requestedAt.getTime() + provider.settleDeadlineMs;
  let response = s.providerResponse;
  let attempt = s.attempts;
  for (let round = 0; !ctx.signal.aborted; round++) {
    // A late report may have settled it meanwhile (the first round starts from a fresh read).
    if (round > 0 && (await settlementState(ctx.principal, s.id)) !== null) return;
    // An unreachable provider is asked again on every round until the deadline.
    let cancel: { response: ProviderResponse; detail: unknown } | undefined;
    if (response === null || response === "unreachable") {
      const a = await client.requestCancel(ref);
      response = a.response;
      cancel = { response: a.response, detail: a.detail };
      ctx.log(`${s.operationId}: cancel -> ${a.response}`);
    }
    const check = await client.checkEffect(ref);
    attempt++;
    await recordRound(ctx.principal, s.id, { cancel, check: { observed: check.effect, detail: check.detail ?? null } });
    const v = decideSettlement({
      hasProvider: true,
      providerResponse: response,
      check: { effect: check.effect, final: check.final },
      executorClaim: null,
      // "unavailable" in a final state (a task the server says is cancelled or failed, with no effect
      // check) will not change by waiting: it is unknown now.
      deadlinePassed: Date.now() >= deadline || (check.effect === "unavailable" && check.final),
    });
    if (v.kind === "settle") return write(ctx, s, v, check, provider.rollbackOwner);
    await pause(nextCheckDelayMs(attempt, deadline - Date.now()), ctx.signal);
  }
}
