// One Claude Code hook event → the control plane → the documented answer. Fail closed: every error
// thrown here becomes exit 2 in main.ts (Claude Code treats a crashing or timed-out hook as allow).
//   SessionStart   registers the session's run (idempotent on session_id) and caches the mapping
//   SubagentStart  registers a child run under it, keyed by agent_id
//   PreToolUse     asks the gate (tool_use_id is the operationId, tool_input the arguments); inside a
//                  subagent the child run asks; a call awaiting a person's approval is held up to
//                  approvalWaitMs, then denied or handed to the user's own prompt (approvalTimeout)
//   SessionEnd     reports every allowed call of the session that never got an outcome as
//                  aborted_unknown (an interrupted call: Claude Code sends no PostToolUseFailure for
//                  it), then marks the session's run finished (docs/fleet-stop.md#run-completion)
//   PostToolUse    reports completion (PostToolUseFailure: outcome failed; with is_interrupt: true the
//                  tool was stopped part-way and its effect is unknown: outcome aborted_unknown)
import path from "node:path";
import type { QuiesceClient } from "../../sdk/client";
import { answerText, QuiesceApiError, REVOKED_REASONS, reasonText } from "../common/control";
import { callArguments } from "../../sdk/arguments";
import type { HookInput, PostToolUseInput, PreToolUseInput } from "./input";
import { askUser, denyToolUse, stopClaude, STOP_PREFIX, type HookOutput } from "./output";
import type { Binding, SessionStore } from "./state";
import { transcriptLineage } from "./lineage";

export interface HookContext {
  client: QuiesceClient;
  store: SessionStore;
  /** taskId for the session run; default "claude-code:<session_id>". */
  taskId?: string;
  leaseTtlSeconds?: number;
  /** How long a call waits for a person's approval; 0 or unset: not at all. */
  approvalWaitMs?: number;
  /** The answer when nobody approved in time: "deny", or "ask" the person at the terminal. */
  approvalTimeout?: "deny" | "ask";
  /** Re-ask period while waiting, when no event wakes the wait (tests shorten it). */
  approvalRecheckMs?: number;
  /** Said to the user while the hook runs (stderr: Claude Code shows it in its transcript view). */
  notice?: (line: string) => void;
  /** The hook's own deadline must cover a wait for an approval (main.ts moves it). */
  extendDeadline?: (ms: number) => void;
}

export interface HookResult {
  exitCode: 0 | 2;
  stdout?: HookOutput;
  stderr?: string;
}

type SessionRef = { session_id: string; cwd?: string; transcript_path?: string; source?: string };
type AgentRef = SessionRef & { agent_id: string; agent_type?: string };

async function registerSession(ctx: HookContext, input: SessionRef): Promise<(Binding & { created: boolean }) | null> {
  const where = input.cwd ? ` in ${path.basename(input.cwd)}` : "";
  // A resumed or forked session inherits the stop of the one it came from (lineage.ts).
  const resumed = input.source === "resume" || input.source === "fork";
  const fork = input.source === "fork" || (input.source === undefined && ctx.store.lineagePending(input.session_id));
  const lineage = transcriptLineage(input.transcript_path, input.session_id, { fork });
  if (fork && !lineage.sourceSessionId) {
    // A fork whose source the transcript does not show yet (not written, or written only in part:
    // seen in CI, where a fork registered as a new root run and ran a tool after its source's kill).
    // Register nothing now — a root run here would be an escape; the first tool call looks again and
    // registers it with its lineage, or, if the source still can't be found, refuses (fail closed).
    ctx.store.markLineagePending(input.session_id);
    return null;
  }
  const r = await ctx.client.createRun({
    taskId: ctx.taskId ?? `claude-code:${input.session_id}`,
    title: `Claude Code session${where}`,
    harness: "claude_code",
    native: { sessionId: input.session_id },
    ...(lineage.sourceSessionId ? { forkedFrom: { sessionId: lineage.sourceSessionId } } : {}),
    ...(ctx.leaseTtlSeconds ? { leaseTtlSeconds: ctx.leaseTtlSeconds } : {}),
  });
  const b = { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
  // A resume whose transcript is not written yet cannot show its lineage: do not cache that answer,
  // so the first tool call registers again with the transcript in place.
  // A resume whose transcript is not readable is not cached: the next event looks again.
  if (!(resumed && !lineage.readable)) ctx.store.write(input.session_id, b);
  return { ...b, created: r.created };
}

async function registerAgent(ctx: HookContext, input: AgentRef): Promise<Binding & { created: boolean }> {
  const parent = await sessionBinding(ctx, input);
  const r = await ctx.client.createRun({
    taskId: ctx.taskId ?? `claude-code:${input.session_id}`,
    title: `Claude Code subagent ${input.agent_type ?? input.agent_id}`,
    harness: "claude_code",
    parentRunId: parent.runId,
    parentLeaseId: parent.leaseId,
    native: { sessionId: input.session_id, agentId: input.agent_id },
    ...(ctx.leaseTtlSeconds ? { leaseTtlSeconds: ctx.leaseTtlSeconds } : {}),
  });
  const b = { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
  ctx.store.write(input.session_id, b, input.agent_id);
  return { ...b, created: r.created };
}

/** The cached mapping, else the server's (idempotent registration returns the existing run). */
async function sessionBinding(ctx: HookContext, input: SessionRef): Promise<Binding> {
  const cached = ctx.store.read(input.session_id);
  if (cached) return cached;
  const b = await registerSession(ctx, { ...input, source: undefined });
  if (!b) throw new Error("the session this one was forked from cannot be found in its transcript yet (fail closed)");
  return b;
}

async function agentBinding(ctx: HookContext, input: AgentRef): Promise<Binding> {
  return ctx.store.read(input.session_id, input.agent_id) ?? (await registerAgent(ctx, input));
}

function stopText(detail: string): string {
  return `${STOP_PREFIX}: ${detail}. No further tool calls are allowed in this session.`;
}

/** After a (re-)registration, a run that is already killed stops Claude at once. */
async function stopIfKilled(ctx: HookContext, runId: string): Promise<HookResult> {
  const run = await ctx.client.getRun(runId);
  if (run.lifecycle === "killed") return { exitCode: 0, stdout: stopClaude(stopText(reasonText("killed"))) };
  return { exitCode: 0 };
}

const FORK_OF_KILLED = "the session this one was resumed or forked from was killed";
const isForkOfKilled = (err: unknown) => err instanceof QuiesceApiError && err.status === 409 && /forkedFrom/.test(err.message);

async function preToolUse(ctx: HookContext, input: PreToolUseInput): Promise<HookResult> {
  let b: Binding;
  try {
    b = input.agent_id ? await agentBinding(ctx, { ...input, agent_id: input.agent_id }) : await sessionBinding(ctx, input);
  } catch (err) {
    if (isForkOfKilled(err))
      return { exitCode: 0, stdout: denyToolUse(`Quiesce denied ${input.tool_name}: ${FORK_OF_KILLED}.`, stopText(FORK_OF_KILLED)) };
    throw err;
  }
  const args = callArguments(input.tool_input);
  const waitMs = ctx.approvalWaitMs ?? 0;
  let waitedFor: string | undefined;
  const out = await ctx.client.gateAndWait(
    {
      runId: b.runId,
      leaseId: b.leaseId,
      epoch: b.epoch,
      operationId: input.tool_use_id,
      tool: input.tool_name,
      ...(args ? { arguments: args } : {}),
    },
    {
      // Claude Code cannot wait inside a hook past its own timeout: a pause is not waited for; a
      // person's approval is, for as long as the setting allows.
      maxHoldMs: 0,
      maxApprovalWaitMs: waitMs,
      ...(ctx.approvalRecheckMs ? { approvalRecheckMs: ctx.approvalRecheckMs } : {}),
      onApproval: (approvalId) => {
        waitedFor = approvalId;
        ctx.extendDeadline?.(waitMs);
        ctx.notice?.(
          `Quiesce: ${input.tool_name} waits for a person to answer approval ${approvalId} (up to ${Math.round(waitMs / 1000)} s; run ${b.runId})`,
        );
      },
    },
  );
  const ans = out.answer;
  if (!ans) throw new Error("the gate was not asked"); // no signal is passed: never cancelled
  if (ans.decision === "allow") {
    ctx.store.markRunning(input.session_id, input.tool_use_id);
    if (waitedFor) ctx.notice?.(`Quiesce: approval ${waitedFor} given; ${input.tool_name} goes ahead`);
    return { exitCode: 0 };
  }
  if (ans.reason === "awaiting_approval") {
    const id = ans.approvalId ?? waitedFor ?? "?";
    const waited = waitMs > 0 ? `was not answered within ${Math.round(waitMs / 1000)} s` : "is not answered yet";
    if (ctx.approvalTimeout === "ask")
      return {
        exitCode: 0,
        stdout: askUser(
          `Quiesce: approval ${id} for ${input.tool_name} ${waited}. Allow it only if you would approve it yourself: Quiesce has not admitted this call (run ${b.runId}).`,
        ),
      };
    const tell = `Quiesce: approval ${id} for ${input.tool_name} ${waited}; the call was refused (a retry asks for a new approval).`;
    return {
      exitCode: 0,
      stdout: denyToolUse(`Quiesce denied ${input.tool_name}: approval ${id} ${waited} (run ${b.runId}).`, undefined, tell),
    };
  }
  if (ans.decision === "hold" && ans.reason === "paused") {
    // A pause denies THIS call with a retry hint; the next call asks the gate afresh. Never allow while paused.
    return { exitCode: 0, stdout: denyToolUse(`Quiesce: ${reasonText("paused")} (run ${b.runId}).`) };
  }
  const why = `Quiesce denied ${input.tool_name}: ${answerText(ans)} (run ${b.runId}, reason ${ans.reason}).`;
  if (REVOKED_REASONS.has(ans.reason)) return { exitCode: 0, stdout: denyToolUse(why, stopText(reasonText(ans.reason))) };
  return { exitCode: 0, stdout: denyToolUse(why) };
}

async function postToolUse(ctx: HookContext, input: PostToolUseInput): Promise<HookResult> {
  const interrupted = input.hook_event_name === "PostToolUseFailure" && input.is_interrupt === true;
  const outcome = interrupted ? "aborted_unknown" : input.hook_event_name === "PostToolUseFailure" ? "failed" : "succeeded";
  try {
    await ctx.client.complete(input.tool_use_id, {
      outcome,
      detail: {
        harness: "claude_code",
        tool: input.tool_name,
        ...(input.agent_id ? { agentId: input.agent_id } : {}),
        ...(interrupted ? { abortedBy: "user_interrupt" } : {}),
      },
    });
    ctx.store.settled(input.session_id, input.tool_use_id);
    return { exitCode: 0 };
  } catch (err) {
    // 409 on a killed tree: the report was kept as barrier evidence; Claude must stop now.
    if (err instanceof QuiesceApiError && err.status === 409) {
      return { exitCode: 0, stdout: stopClaude(stopText(reasonText("killed"))) };
    }
    // A call the user let through at an approval timeout (`ask`) was never admitted: nothing to report.
    if (err instanceof QuiesceApiError && err.status === 404 && !ctx.store.unsettled(input.session_id).includes(input.tool_use_id)) {
      return { exitCode: 0, stderr: `quiesce hook: ${input.tool_use_id} was not admitted by Quiesce; no outcome recorded` };
    }
    throw err;
  }
}

export async function handleHookEvent(ctx: HookContext, input: HookInput): Promise<HookResult> {
  switch (input.hook_event_name) {
    case "SessionStart": {
      let b: (Binding & { created: boolean }) | null;
      try {
        b = await registerSession(ctx, input);
        if (!b) return { exitCode: 0 };
      } catch (err) {
        // Resumed or forked from a killed session: stop at once (every tool call would be refused anyway).
        if (isForkOfKilled(err)) return { exitCode: 0, stdout: stopClaude(stopText(FORK_OF_KILLED)) };
        throw err;
      }
      return b.created ? { exitCode: 0 } : stopIfKilled(ctx, b.runId);
    }
    case "SubagentStart": {
      let b: Binding;
      try {
        b = await registerAgent(ctx, input);
      } catch (err) {
        // A killed parent refuses children: answer with the stop, not with a crash.
        const parent = ctx.store.read(input.session_id);
        if (err instanceof QuiesceApiError && err.status < 500 && parent) {
          const r = await stopIfKilled(ctx, parent.runId);
          if (r.stdout) return r;
        }
        throw err;
      }
      return stopIfKilled(ctx, b.runId);
    }
    case "PreToolUse":
      return preToolUse(ctx, input);
    case "PostToolUse":
    case "PostToolUseFailure":
      return postToolUse(ctx, input);
    default:
      // SessionEnd: the session's run (and its subagents' runs) finished; a fleet stop leaves it alone.
      // Best effort: the session is over, nothing is gated, so a failed report never blocks the exit.
      if (input.event === "SessionEnd") {
        // Allowed calls with no outcome by now were interrupted (or lost their report): their
        // effect is unknown. A call already reported, or on a killed tree (409), is left as it is.
        for (const operationId of ctx.store.unsettled(input.session_id)) {
          const reported = await ctx.client
            .complete(operationId, {
              outcome: "aborted_unknown",
              detail: { harness: "claude_code", abortedBy: "no_outcome_at_session_end" },
            })
            .then(
              () => true,
              (err: unknown) => err instanceof QuiesceApiError && err.status < 500,
            );
          if (reported) ctx.store.settled(input.session_id, operationId);
        }
        const b = ctx.store.read(input.session_id);
        // The session's process is gone: whatever of it still runs is abandoned (an unknown outcome for a
        // person), never left running under a finished run.
        if (b) await ctx.client.finish(b.runId, { abandon: true }).catch(() => undefined);
      }
      return { exitCode: 0 };
  }
}
