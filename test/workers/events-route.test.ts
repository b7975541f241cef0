// GET /api/v1/runs/{runId}/events over real HTTP: authentication, the other-team 404, the stream's
// frames (ready, control, keep-alive), the SDK's subscribe, and a clean end when the client leaves.
process.env.QUIESCE_SSE_KEEPALIVE_MS = "40";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { makeWorld, raw, type World } from "../api/fixtures";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { controlListener, closeControlListener } from "../../lib/modules/stop/abort/listener";
import type { RunEvent } from "../../lib/agent/sdk/events";
import type { Principal } from "../../lib/platform/auth/principal";

const SYSTEM: Principal = { type: "system", name: "test" };
let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await closeControlListener();
  await w?.close();
});

describe("GET /api/v1/runs/{runId}/events", () => {
  test("401 without a key, 404 for another team's run (exactly like a missing one)", async () => {
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "sse-auth" });
    const noKey = await raw(w.server.url, "GET", `/api/v1/runs/${run.runId}/events`);
    expect(noKey.status).toBe(401);
    const other = await raw(w.server.url, "GET", `/api/v1/runs/${run.runId}/events`, { key: w.b.keys.agent });
    const missing = await raw(w.server.url, "GET", `/api/v1/runs/run_nope/events`, { key: w.b.keys.agent });
    expect(other.status).toBe(404);
    expect(other.json).toEqual(missing.json);
  });

  test("streams ready, then control events of the tree, with keep-alive comments; ends when the client leaves", async () => {
    const agent = w.client(w.a.keys.agent);
    const root = await agent.createRun({ taskId: "sse-stream" });
    const child = await agent.createRun({ taskId: "sse-stream", parentRunId: root.runId });
    const baseline = controlListener().subscriberCount;
    const ctrl = new AbortController();
    const res = await fetch(`${w.server.url}/api/v1/runs/${child.runId}/events`, {
      headers: { authorization: `Bearer ${w.a.keys.worker}` },
      signal: ctrl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil("event: ready");
    // Two subscriptions per stream: its run tree, and its team (fleet stop scopes concern every run of the team).
    expect(controlListener().subscriberCount).toBe(baseline + 2);
    // A pause of the ROOT reaches a stream opened for the CHILD (same tree).
    await pauseRun(SYSTEM, root.runId, "look");
    await readUntil('"kind":"pause"');
    await readUntil(": keep-alive");
    const frame = text.split("\n\n").find((f) => f.includes('"kind":"pause"'))!;
    expect(frame).toContain("event: control");
    expect(JSON.parse(frame.split("data: ")[1]!)).toMatchObject({ kind: "pause", teamId: w.a.teamId, rootRunId: root.runId });
    ctrl.abort();
    await vi.waitFor(() => expect(controlListener().subscriberCount).toBe(baseline), { timeout: 10_000 });
  });

  test("events of another team's tree never appear on a stream", async () => {
    const a = await w.client(w.a.keys.agent).createRun({ taskId: "sse-a" });
    const b = await w.client(w.b.keys.agent).createRun({ taskId: "sse-b" });
    const seen: RunEvent[] = [];
    const ctrl = new AbortController();
    await w.client(w.a.keys.worker).subscribe(a.runId, (e) => seen.push(e), ctrl.signal);
    await pauseRun(SYSTEM, b.runId, "other team");
    await pauseRun(SYSTEM, a.runId, "mine");
    await vi.waitFor(() => expect(seen.some((e) => e.type === "control" && e.data.kind === "pause")).toBe(true), { timeout: 10_000 });
    const controls = seen.filter((e) => e.type === "control");
    expect(controls.every((e) => e.type === "control" && e.data.rootRunId === a.runId)).toBe(true);
    ctrl.abort();
  });

  test("SDK subscribe: resolves once live, delivers events, and rejects when the run is not visible", async () => {
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "sse-sdk" });
    const seen: RunEvent[] = [];
    const ctrl = new AbortController();
    await w.client(w.a.keys.worker).subscribe(run.runId, (e) => seen.push(e), ctrl.signal);
    expect(seen[0]).toMatchObject({ type: "ready", data: { runId: run.runId, rootRunId: run.runId, lifecycle: "normal" } });
    await pauseRun(SYSTEM, run.runId, "p");
    await resumeRun(SYSTEM, run.runId, "r");
    await vi.waitFor(
      () => expect(seen.filter((e) => e.type === "control").map((e) => e.type === "control" && e.data.kind)).toEqual(["pause", "resume"]),
      { timeout: 10_000 },
    );
    ctrl.abort();
    await expect(w.client(w.b.keys.worker).subscribe(run.runId, () => {}, new AbortController().signal)).rejects.toMatchObject({
      status: 404,
    });
  });
});
