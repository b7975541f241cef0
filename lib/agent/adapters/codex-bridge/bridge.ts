// `quiesce codex-bridge [--run <id>] -- <codex app-server command…>`: sits between an app-server client
// (this process's stdin/stdout) and `codex app-server` (a child on stdio), forwarding every message
// unchanged except:
//   - thread/start, thread/resume, thread/fork and turn/start get the approval policy and sandbox that
//     make Codex ask about every command, file change and MCP tool call ("untrusted", read-only);
//     whatever the client asked for is replaced (codexPolicy.ts).
//   - item/commandExecution/requestApproval and item/fileChange/requestApproval are answered by the
//     bridge from the gate: "accept" on allow; "decline" (refuse this one action, the turn goes on)
//     on a hold that lasts longer than QUIESCE_CODEX_MAX_HOLD_MS, a refusal that is not a kill, or
//     any failure; "cancel" (and turn/interrupt) on a kill. Never "acceptForSession". A gate that
//     wants a person's approval keeps Codex's request pending until that person answers (accept or
//     decline) or QUIESCE_APPROVAL_WAIT_MS passes (decline).
//   - calls the client makes directly (fs/*, command/exec*, thread/shellCommand, mcpServer/tool/call,
//     …, see DIRECT_METHODS) are asked of the gate on the bridge's own run first; refused ones never
//     reach the app-server.
//   - thread/fork: the new thread's run is registered as forked from the source thread's run, so it
//     inherits the source's kill (no escape by fork).
//   - on kill: turn/interrupt {threadId, turnId} for each active turn; a client's new turn/start or
//     turn/steer on a killed thread is refused without reaching the app-server.
// Message shapes: codex-rs/app-server/README.md ("Approvals", "Turn events", "Interrupt an active turn").
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import type { QuiesceClient } from "../../sdk/client";
import type { AdapterConfig } from "../common/config";
import { answerText, describeError, QuiesceApiError, REVOKED_REASONS } from "../common/control";
import { callArguments } from "../../sdk/arguments";
import { askGate } from "../../sdk/hold";
import { classify, LineWriter, onLines, str, type RpcId, type RpcMessage } from "./jsonrpc";
import { DIRECT_METHODS, enforcePolicy, POLICY_METHODS, VETO_METHODS } from "./policy";
import { ThreadTracker, type RunBinding, type ThreadState } from "./threads";

export const APPROVAL_METHODS: Record<string, string> = {
  "item/commandExecution/requestApproval": "codex.commandExecution",
  "item/fileChange/requestApproval": "codex.fileChange",
};

export interface BridgeOptions {
  cfg: AdapterConfig;
  client: QuiesceClient;
  parentRunId?: string;
  /** The parent's lease, when this key is not the parent run's holder (docs/security/authorization.md#holders). */
  parentLeaseId?: string;
  taskId?: string;
  command: string;
  args: string[];
  clientIn?: Readable;
  clientOut?: Writable;
  recheckMs?: number;
  /** A hold longer than this declines the approval (the turn goes on without the action). */
  maxHoldMs?: number;
  /** How long an approval request waits for a person's answer to the gate's approval; default: no limit. */
  approvalWaitMs?: number;
  log?: (m: string) => void;
}

export const DEFAULT_CODEX_MAX_HOLD_MS = 5 * 60_000;

interface OpenOp {
  operationId: string;
  threadId: string;
  turnId: string;
  tool: string;
}

function operationIdFor(threadId: string, turnId: string, itemId: string, approvalId?: string): string {
  const id = `codex-${threadId}-${turnId}-${itemId}${approvalId ? `-${approvalId}` : ""}`;
  return id.length <= 200 ? id : `codex-${createHash("sha256").update(id).digest("hex")}`;
}

export async function runBridge(o: BridgeOptions): Promise<number> {
  const log = o.log ?? ((m: string) => process.stderr.write(`quiesce codex-bridge: ${m}\n`));
  const child = spawn(o.command, o.args, { stdio: ["pipe", "pipe", "inherit"], env: upstreamEnv() });
  const exited = new Promise<number>((resolve) => {
    child.once("exit", (code, sig) => resolve(code ?? (sig ? 1 : 0)));
    child.once("error", (err) => {
      log(`cannot start the app-server: ${err.message}`);
      resolve(1);
    });
  });
  const toServer = new LineWriter(child.stdin);
  const toClient = new LineWriter(o.clientOut ?? process.stdout);
  child.stdin.on("error", () => {}); // the child may exit first; its exit is handled below

  let seq = 0;
  const ownRequests = new Map<RpcId, string>(); // bridge-originated request id → description
  const clientTurnStarts = new Map<RpcId, string>(); // client's turn/start id → threadId
  const held = new Map<RpcId, { threadId: string; cancel: () => void }>(); // approvals being decided
  const openOps = new Map<string, OpenOp>(); // itemId → allowed operation awaiting item/completed
  const startedItems = new Map<string, unknown>(); // itemId → the item of item/started (what a file change changes)
  // A hold longer than the pause limit, or a person's approval not given in time, declines.
  const holdLimits = {
    maxHoldMs: o.maxHoldMs ?? DEFAULT_CODEX_MAX_HOLD_MS,
    ...(o.approvalWaitMs !== undefined ? { maxApprovalWaitMs: o.approvalWaitMs } : {}),
  };
  const argumentsOf = (params: unknown, extra: Record<string, unknown> = {}) => {
    const { threadId: _t, turnId: _u, itemId: _i, ...rest } = (params ?? {}) as Record<string, unknown>;
    const args = callArguments({ ...rest, ...extra });
    return args ? { arguments: args } : {};
  };

  const tracker = new ThreadTracker({
    cfg: o.cfg,
    client: o.client,
    parentRunId: o.parentRunId,
    parentLeaseId: o.parentLeaseId,
    taskId: o.taskId,
    recheckMs: o.recheckMs,
    log,
    interrupt: (threadId, turnId) => {
      const id = `quiesce-bridge-${++seq}`;
      ownRequests.set(id, `turn/interrupt ${turnId}`);
      toServer.send({ method: "turn/interrupt", id, params: { threadId, turnId } });
    },
    onKilled: (t) => {
      for (const h of held.values()) if (h.threadId === t.threadId) h.cancel();
    },
  });

  const complete = async (op: OpenOp, outcome: "succeeded" | "failed" | "aborted_unknown", detail: Record<string, unknown>) => {
    try {
      await o.client.complete(op.operationId, { outcome, detail: { harness: "codex", tool: op.tool, ...detail } });
    } catch (err) {
      if (!(err instanceof QuiesceApiError && err.status === 409))
        log(`could not report ${outcome} for ${op.operationId}: ${describeError(err)}`);
    }
  };

  /** Decides one approval request: accept, decline (this action only) or cancel (a kill). */
  const decide = async (req: RpcMessage & { id: RpcId; method: string }): Promise<"accept" | "decline" | "cancel"> => {
    const threadId = str(req.params, "threadId");
    const turnId = str(req.params, "turnId");
    const itemId = str(req.params, "itemId");
    if (!threadId || !turnId || !itemId) {
      log(`${req.method} without threadId/turnId/itemId: declining`);
      return "decline";
    }
    const t = tracker.get(threadId);
    if (t.killed) return "cancel";
    const tool = APPROVAL_METHODS[req.method]!;
    const operationId = operationIdFor(threadId, turnId, itemId, str(req.params, "approvalId"));
    const stopWaiting = new AbortController();
    held.set(req.id, { threadId, cancel: () => stopWaiting.abort() });
    try {
      const b = await tracker.ensureRun(t, turnId);
      const item = startedItems.get(itemId);
      const args = argumentsOf(req.params, item === undefined ? {} : { item });
      // Codex's request stays pending while the gate holds: the turn waits for a resume or a person's answer.
      const out = await askGate(() => o.client.gate({ runId: b.runId, leaseId: b.leaseId, epoch: b.epoch, operationId, tool, ...args }), {
        signal: stopWaiting.signal,
        wake: () => tracker.doorbell.signal,
        ...holdLimits,
        onApproval: (approvalId) => log(`${tool} ${itemId} waits for a person to answer approval ${approvalId}`),
      });
      if (out.kind === "cancelled") return "cancel"; // the thread was killed while held
      if (out.kind === "held_too_long") {
        log(`${tool} ${itemId} held for ${out.heldMs} ms (${answerText(out.answer)}): declining`);
        return "decline";
      }
      if (out.answer.decision === "allow") {
        openOps.set(itemId, { operationId, threadId, turnId, tool });
        return "accept";
      }
      log(`${tool} ${itemId} denied: ${answerText(out.answer)}`);
      if (REVOKED_REASONS.has(out.answer.reason)) {
        tracker.killed(t);
        return "cancel";
      }
      return "decline";
    } catch (err) {
      if (t.killed) return "cancel";
      log(`${tool} ${itemId}: ${describeError(err)}; declining (fail closed)`);
      return "decline";
    } finally {
      held.delete(req.id);
    }
  };

  // ── direct client calls: gated on the bridge's own run ──
  let ownRun: Promise<RunBinding> | null = null;
  const bridgeRun = (): Promise<RunBinding> => {
    ownRun ??= o.client
      .createRun({
        taskId: o.taskId ?? `codex-bridge:${o.parentRunId ?? "root"}`,
        title: "Codex app-server client (direct calls)",
        harness: "codex",
        ...(o.parentRunId ? { parentRunId: o.parentRunId } : {}),
        ...(o.parentLeaseId ? { parentLeaseId: o.parentLeaseId } : {}),
        native: { sessionId: `codex-bridge-${bridgeId}` },
      })
      .then(
        (r) => ({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch }),
        (err) => {
          ownRun = null;
          throw err;
        },
      );
    return ownRun;
  };
  const bridgeId = `${process.pid}-${Date.now().toString(36)}`;
  let directSeq = 0;
  /** The gate's answer to one Codex request, held while a pause or a person's approval lasts (the SDK's one loop). */
  const askAbout = (b: { runId: string; leaseId: string; epoch: number }, operationId: string, msg: { method: string; params?: unknown }) =>
    askGate(
      () =>
        o.client.gate({
          runId: b.runId,
          leaseId: b.leaseId,
          epoch: b.epoch,
          operationId,
          tool: `codex.${msg.method}`,
          ...argumentsOf(msg.params),
        }),
      { wake: () => tracker.doorbell.signal, ...holdLimits },
    );

  const gateDirect = async (msg: RpcMessage & { id: RpcId; method: string }): Promise<string | null> => {
    // A kill of any thread of this session stops the client's direct calls too.
    if (tracker.anyKilled()) return "a run of this Codex session was killed by an operator";
    const threadId = str(msg.params, "threadId");
    try {
      const b = threadId ? await tracker.ensureRun(tracker.get(threadId)) : await bridgeRun();
      const operationId = `codex-direct-${bridgeId}-${++directSeq}`;
      const out = await askAbout(b, operationId, msg);
      if (out.kind === "decided" && out.answer.decision === "allow") {
        // Finished when the app-server answers (fromServer); the answer's error decides the outcome.
        directOps.set(msg.id, { operationId, threadId: threadId ?? "", turnId: "", tool: `codex.${msg.method}` });
        return null;
      }
      if (out.kind === "held_too_long")
        return out.answer.reason === "awaiting_approval"
          ? `refused: ${answerText(out.answer)}, not answered in time`
          : "paused by operator, retry later";
      return `refused (${out.answer ? answerText(out.answer) : "cancelled"})`;
    } catch (err) {
      return `the control plane could not be asked (${describeError(err)}); refused (fail closed)`;
    }
  };
  const directOps = new Map<RpcId, OpenOp>();

  /** Asks the gate about a server request the client would otherwise answer alone; null = allowed. */
  const veto = async (msg: RpcMessage & { id: RpcId; method: string }): Promise<{ killed: boolean; why: string } | null> => {
    const threadId = str(msg.params, "threadId") ?? str(msg.params, "conversationId");
    const t = threadId ? tracker.get(threadId) : undefined;
    if (t?.killed || (!t && tracker.anyKilled())) return { killed: true, why: "Quiesce: the run was killed by an operator" };
    try {
      const b = t ? await tracker.ensureRun(t, str(msg.params, "turnId")) : await bridgeRun();
      const operationId = `codex-${threadId ?? bridgeId}-${msg.method.replaceAll("/", ".")}-${String(msg.id)}`;
      const out = await askAbout(b, operationId, msg);
      if (out.kind === "decided" && out.answer.decision === "allow") return null;
      const reason = out.answer?.reason ?? "cancelled";
      const killed = out.kind === "decided" && REVOKED_REASONS.has(reason);
      if (killed && t) tracker.killed(t);
      return { killed, why: `Quiesce refused ${msg.method}: ${out.answer ? answerText(out.answer) : reason}` };
    } catch (err) {
      return { killed: false, why: `Quiesce could not ask the control plane (${describeError(err)}); refused (fail closed)` };
    }
  };

  const fromServer = (line: string) => {
    const c = classify(line);
    if (c.kind === "request" && APPROVAL_METHODS[c.msg.method]) {
      void decide(c.msg).then((decision) => toServer.send({ id: c.msg.id, result: { decision } }));
      return; // answered by the bridge, never shown to the client
    }
    if (c.kind === "request" && Object.hasOwn(VETO_METHODS, c.msg.method)) {
      const msg = c.msg;
      void veto(msg).then((refusal) => {
        if (refusal === null) toClient.send(msg);
        else toServer.send({ id: msg.id, ...VETO_METHODS[msg.method]!(refusal.killed, refusal.why) });
      });
      return;
    }
    if (c.kind === "response" && ownRequests.has(c.msg.id)) {
      const what = ownRequests.get(c.msg.id);
      ownRequests.delete(c.msg.id);
      if (c.msg.error) log(`${what} failed: ${c.msg.error.message}`);
      return;
    }
    if (c.kind === "response" && directOps.has(c.msg.id)) {
      const op = directOps.get(c.msg.id)!;
      directOps.delete(c.msg.id);
      void complete(op, c.msg.error ? "failed" : "succeeded", c.msg.error ? { error: c.msg.error.message } : {});
    }
    if (c.kind === "response" && clientForks.has(c.msg.id)) {
      const source = clientForks.get(c.msg.id)!;
      clientForks.delete(c.msg.id);
      const forked = str(c.msg.result, "thread", "id");
      if (forked) tracker.forked(forked, source);
    }
    if (c.kind === "response" && clientTurnStarts.has(c.msg.id)) {
      const threadId = clientTurnStarts.get(c.msg.id)!;
      clientTurnStarts.delete(c.msg.id);
      const turnId = str(c.msg.result, "turn", "id");
      if (turnId) tracker.turnStarted(threadId, turnId);
    }
    if (c.kind === "notification") observe(c.msg.method, c.msg.params);
    if (c.kind === "raw") toClient.raw(c.line);
    else toClient.send(c.msg);
  };

  const observe = (method: string, params: unknown) => {
    const threadId = str(params, "threadId");
    if (method === "turn/started" && threadId) {
      const turnId = str(params, "turn", "id");
      if (turnId) tracker.turnStarted(threadId, turnId);
    } else if (method === "turn/completed") {
      const turnId = str(params, "turn", "id");
      const status = str(params, "turn", "status");
      if (!turnId) return;
      // The README documents the payload as `{ turn }`; v2 also carries threadId. Accept both.
      const owner = threadId ?? tracker.threadOfTurn(turnId);
      if (!owner) return;
      for (const [itemId, op] of openOps) {
        if (op.turnId !== turnId) continue;
        openOps.delete(itemId); // accepted but never completed: its effect is unknown
        void complete(op, "aborted_unknown", { turnStatus: status });
      }
      void tracker.turnCompleted(owner, turnId, status);
    } else if (method === "item/started") {
      const itemId = str(params, "item", "id");
      if (itemId && startedItems.size < 10_000) startedItems.set(itemId, (params as { item?: unknown }).item);
    } else if (method === "item/completed") {
      const itemId = str(params, "item", "id");
      if (itemId) startedItems.delete(itemId);
      const op = itemId ? openOps.get(itemId) : undefined;
      if (!op || !itemId) return;
      openOps.delete(itemId);
      const status = str(params, "item", "status");
      void complete(op, status === "completed" ? "succeeded" : "failed", { itemStatus: status });
    }
  };

  const clientForks = new Map<RpcId, string>(); // client's thread/fork id → source threadId
  const fromClient = (line: string) => {
    const c = classify(line);
    if (c.kind === "request" && POLICY_METHODS.has(c.msg.method)) {
      c.msg.params = enforcePolicy(c.msg.method, c.msg.params);
      if (c.msg.method === "thread/fork") {
        const source = str(c.msg.params, "threadId");
        if (source && tracker.get(source).killed) {
          toClient.send({ id: c.msg.id, error: { code: -32000, message: "Quiesce: the thread to fork was killed by an operator" } });
          return;
        }
        if (source) clientForks.set(c.msg.id, source);
      }
    }
    if (c.kind === "request" && DIRECT_METHODS.has(c.msg.method)) {
      const msg = c.msg;
      void gateDirect(msg).then((refusal) => {
        if (refusal === null) toServer.send(msg);
        else toClient.send({ id: msg.id, error: { code: -32000, message: `Quiesce: ${msg.method} ${refusal}` } });
      });
      return;
    }
    if (c.kind === "request" && (c.msg.method === "turn/start" || c.msg.method === "turn/steer")) {
      const threadId = str(c.msg.params, "threadId");
      const t: ThreadState | undefined = threadId ? tracker.get(threadId) : undefined;
      if (t?.killed) {
        toClient.send({
          id: c.msg.id,
          error: { code: -32000, message: `Quiesce: run ${t.runId ?? ""} was killed by an operator; no new turns` },
        });
        return;
      }
      if (c.msg.method === "turn/start" && threadId) clientTurnStarts.set(c.msg.id, threadId);
    }
    if (c.kind === "raw") toServer.raw(c.line);
    else toServer.send(c.msg);
  };

  const clientIn = o.clientIn ?? process.stdin;
  void onLines(child.stdout, fromServer);
  void onLines(clientIn, fromClient).then(() => child.stdin.end());
  const code = await exited;
  tracker.close();
  await tracker.finishAll();
  clientIn.destroy(); // the app-server is gone: stop reading the client so the process can exit
  return code;
}

function upstreamEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.QUIESCE_API_KEY;
  delete env.QUIESCE_API_KEY_FILE;
  return env;
}
