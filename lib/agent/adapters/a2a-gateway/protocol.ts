// What the A2A gateway reads of the A2A protocol (docs/design/mcp-tasks.md), both dialects:
//   v1.0 JSON-RPC  SendMessage / SendStreamingMessage → { task } | { message } (stream events also
//                  { statusUpdate: { taskId, status } }); GetTask / CancelTask { id }; states TASK_STATE_*;
//                  header A2A-Version: 1.0
//   v0.3 JSON-RPC  message/send / message/stream → a Task ({ kind: "task", id, status }) or a Message;
//                  tasks/get / tasks/cancel { id }; states "working", "canceled", …
//   HTTP+JSON      POST …/message:send, …/message:stream; GET …/tasks/{id}; POST …/tasks/{id}:cancel
// Errors: -32001 TaskNotFoundError, -32002 TaskNotCancelableError.
// Pure: no I/O.

export const TASK_NOT_FOUND = -32001;
export const TASK_NOT_CANCELABLE = -32002;

export type Dialect = "v1" | "v0.3" | "rest";

/** The calls that start work at the remote agent: gated like a tool call. */
export const SEND_METHODS: Record<string, { dialect: Dialect; streaming: boolean }> = {
  SendMessage: { dialect: "v1", streaming: false },
  SendStreamingMessage: { dialect: "v1", streaming: true },
  "message/send": { dialect: "v0.3", streaming: false },
  "message/stream": { dialect: "v0.3", streaming: true },
};

export const METHODS: Record<"v1" | "v0.3", { get: string; cancel: string }> = {
  v1: { get: "GetTask", cancel: "CancelTask" },
  "v0.3": { get: "tasks/get", cancel: "tasks/cancel" },
};

/** A REST path that sends a message (`…/message:send`, `…/message:stream`), or null. */
export function restSend(pathname: string): { streaming: boolean } | null {
  const m = /\/message:(send|stream)$/.exec(pathname);
  return m ? { streaming: m[1] === "stream" } : null;
}

/** A task state in one spelling: "working", "input-required", "canceled", … */
export function normalState(state: unknown): string {
  if (typeof state !== "string") return "unknown";
  return state
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, "-");
}

export const TERMINAL = new Set(["completed", "canceled", "failed", "rejected"]);

export interface TaskView {
  id: string;
  state: string;
  timestamp: string | null;
}

/** The task a result or stream event is about, if any (a plain Message answer has none). */
export function taskOf(result: unknown): TaskView | null {
  const r = (result ?? {}) as Record<string, unknown>;
  const task = (r.task ?? (r.kind === "task" || (typeof r.id === "string" && r.status) ? r : null)) as Record<string, unknown> | null;
  if (task && typeof task.id === "string") {
    const status = (task.status ?? {}) as Record<string, unknown>;
    return { id: task.id, state: normalState(status.state), timestamp: typeof status.timestamp === "string" ? status.timestamp : null };
  }
  const update = (r.statusUpdate ?? (r.kind === "status-update" ? r : null)) as Record<string, unknown> | null;
  if (update && typeof update.taskId === "string") {
    const status = (update.status ?? {}) as Record<string, unknown>;
    return {
      id: update.taskId,
      state: normalState(status.state),
      timestamp: typeof status.timestamp === "string" ? status.timestamp : null,
    };
  }
  return null;
}

/** What the agent said, in the words of the evidence. */
export function sentenceOf(t: TaskView): string {
  return `the A2A agent reported task ${t.id} ${t.state}${t.timestamp ? ` at ${t.timestamp}` : ""}`;
}
