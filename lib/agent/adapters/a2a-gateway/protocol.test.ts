import { expect, test } from "vitest";
import { normalState, restSend, sentenceOf, taskOf } from "./protocol";

test("task states read the same in both dialects", () => {
  expect(normalState("TASK_STATE_INPUT_REQUIRED")).toBe("input-required");
  expect(normalState("TASK_STATE_CANCELED")).toBe("canceled");
  expect(normalState("canceled")).toBe("canceled");
  expect(normalState(undefined)).toBe("unknown");
});

test("the task an answer or a stream event is about; a plain Message names none", () => {
  const v1 = { task: { id: "t1", status: { state: "TASK_STATE_WORKING", timestamp: "2026-12-06T00:00:00Z" } } };
  expect(taskOf(v1)).toEqual({ id: "t1", state: "working", timestamp: "2026-12-06T00:00:00Z" });
  expect(taskOf({ kind: "task", id: "t2", status: { state: "submitted" } })).toEqual({ id: "t2", state: "submitted", timestamp: null });
  expect(taskOf({ statusUpdate: { taskId: "t3", status: { state: "TASK_STATE_COMPLETED" } } })).toMatchObject({
    id: "t3",
    state: "completed",
  });
  expect(taskOf({ kind: "status-update", taskId: "t4", status: { state: "canceled" } })).toMatchObject({ id: "t4", state: "canceled" });
  expect(taskOf({ message: { messageId: "m", role: "ROLE_AGENT", parts: [] } })).toBeNull();
  expect(sentenceOf({ id: "t1", state: "canceled", timestamp: "T" })).toBe("the A2A agent reported task t1 canceled at T");
});

test("HTTP+JSON sends are recognised by their path", () => {
  expect(restSend("/v1/message:send")).toEqual({ streaming: false });
  expect(restSend("/message:stream")).toEqual({ streaming: true });
  expect(restSend("/tasks/abc")).toBeNull();
});
