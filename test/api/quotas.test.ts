// Per-key and per-run quotas (lib/modules/gate/quotas.ts, docs/security/hardening.md#quotas) through the real route handlers
// over HTTP, against real PostgreSQL: past each limit 429 with Retry-After and nothing written; another
// key of the same team and another team's key carry on; racing calls cannot pass one count together.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { openEventStreams } from "../../lib/modules/gate/quotas";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeWorld, raw, snapshot, type World } from "./fixtures";

const SYSTEM: Principal = { type: "system", name: "test" };
const LIMITS = {
  QUIESCE_QUOTA_RUNS_PER_MINUTE: "5",
  QUIESCE_QUOTA_RUN_OPERATIONS: "3",
  QUIESCE_QUOTA_OBSERVED_PER_RUN: "3",
  QUIESCE_QUOTA_EVENT_STREAMS: "2",
};

let w: World;
/** A second agent key of team a, and its id. */
let a2: { secret: string; id: string };
beforeAll(async () => {
  Object.assign(process.env, LIMITS);
  w = await makeWorld();
  const k = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "second agent" });
  a2 = { secret: k.secret, id: k.id };
});
afterAll(async () => {
  for (const name of Object.keys(LIMITS)) delete process.env[name];
  await w?.close();
});

const post = (key: string, path: string, body: unknown) => raw(w.server.url, "POST", path, { key, body });

function expectQuota(r: { status: number; json: any }, headers: Headers | null, windowSeconds: number) {
  expect(r.status).toBe(429);
  expect(r.json.error.code).toBe("rate_limited");
  expect(r.json.error.message).toMatch(/^quota: /);
  if (headers) {
    const retry = Number(headers.get("retry-after"));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(windowSeconds);
  }
}

/** POST with the response headers (raw() keeps only status and body). */
async function postWithHeaders(key: string, path: string, body: unknown) {
  const res = await fetch(w.server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as any, headers: res.headers };
}

/** Calls made within one fixed window: wait out the last seconds of the database's current minute. */
async function awayFromMinuteEdge(): Promise<void> {
  const rows = await prisma().$queryRawUnsafe<{ s: number }[]>(`SELECT extract(second FROM now())::float8 AS s`);
  const s = rows[0]?.s ?? 0;
  if (s > 50) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
}

describe("runs registered per key per minute", () => {
  test("12 racing registrations on one key: exactly 5 registered, 7 refused with Retry-After, writing nothing", async () => {
    const key = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "racer" });
    await awayFromMinuteEdge();
    const before = await prisma().run.count({ where: { teamId: w.a.teamId } });
    const auditBefore = await prisma().auditEvent.count({ where: { teamId: w.a.teamId } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postWithHeaders(key.secret, "/api/v1/runs", { taskId: `quota-race-${i}` })),
    );
    const ok = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(ok).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const r of refused) expectQuota(r, r.headers, 60);
    expect(await prisma().run.count({ where: { teamId: w.a.teamId } })).toBe(before + 5);
    // Each registration audits itself; the refused ones added no row.
    const auditAfter = await prisma().auditEvent.count({ where: { teamId: w.a.teamId } });
    const perRun = (auditAfter - auditBefore) / 5;
    expect(Number.isInteger(perRun)).toBe(true);
    expect((await prisma().quotaWindow.findUniqueOrThrow({ where: { subject: `runs:${key.id}` } })).used).toBe(5);

    // Another key of the same team, and another team's key, are not held back.
    expect((await post(a2.secret, "/api/v1/runs", { taskId: "quota-other-key" })).status).toBe(201);
    expect((await post(w.b.keys.agent, "/api/v1/runs", { taskId: "quota-other-team" })).status).toBe(201);
    // The limited key is refused again, and that refusal changes nothing either.
    const snap = await snapshot(w.a.teamId);
    expectQuota(await post(key.secret, "/api/v1/runs", { taskId: "quota-again" }), null, 60);
    expect(await snapshot(w.a.teamId)).toEqual(snap);
    expect((await prisma().quotaWindow.findUniqueOrThrow({ where: { subject: `runs:${key.id}` } })).used).toBe(5);

    // The next window (its start moved back a minute here, instead of waiting for it) counts afresh.
    await prisma().$executeRawUnsafe(
      `UPDATE quota_windows SET window_start = window_start - interval '1 minute' WHERE subject = $1`,
      `runs:${key.id}`,
    );
    expect((await post(key.secret, "/api/v1/runs", { taskId: "quota-next-minute" })).status).toBe(201);
  });

  test("a registration refused by the handler (404 parent) gives its count back; a 403 key never counts", async () => {
    const key = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "unlucky" });
    await awayFromMinuteEdge();
    const other = await w.client(w.b.keys.agent).createRun({ taskId: "quota-b-parent" });
    for (let i = 0; i < 6; i++) {
      const r = await post(key.secret, "/api/v1/runs", {
        taskId: "quota-bad-parent",
        parentRunId: other.runId,
        parentLeaseId: other.leaseId,
      });
      expect(r.status).toBe(404);
    }
    const row = await prisma().quotaWindow.findUnique({ where: { subject: `runs:${key.id}` } });
    expect(row?.used ?? 0).toBe(0);
    for (let i = 0; i < 5; i++) expect((await post(key.secret, "/api/v1/runs", { taskId: `quota-after-404-${i}` })).status).toBe(201);
    // A worker key may not register runs: 403 as before, and no counter row for it.
    const worker = w.a.keyIds.worker!;
    expect((await post(w.a.keys.worker, "/api/v1/runs", { taskId: "quota-worker" })).status).toBe(403);
    expect(await prisma().quotaWindow.findUnique({ where: { subject: `runs:${worker}` } })).toBeNull();
  });
});

describe("unfinished operations per run", () => {
  const op = (run: { runId: string; leaseId: string; epoch: number }, operationId: string) => ({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId,
    kind: "queued",
    tool: "deploy",
  });

  test("8 racing registrations on one run: exactly 3 queued, 5 refused with Retry-After, nothing written by them", async () => {
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "quota-ops" });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => postWithHeaders(w.a.keys.agent, "/api/v1/operations", op(run, `quota-op-${run.runId}-${i}`))),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(3);
    for (const r of answers.filter((a) => a.status !== 201)) expectQuota(r, r.headers, 5);
    expect(await prisma().operation.count({ where: { runId: run.runId } })).toBe(3);

    // A repeat of a registration already made is still its idempotent 200, not a refusal.
    const first = created[0]!.json.operationId as string;
    expect((await post(w.a.keys.agent, "/api/v1/operations", op(run, first))).status).toBe(200);
    // Another key of the team on its own run, and another team's key on its run, register as usual.
    const own = await w.client(a2.secret).createRun({ taskId: "quota-ops-other-key" });
    expect((await post(a2.secret, "/api/v1/operations", op(own, `quota-op-own-${own.runId}`))).status).toBe(201);
    const theirs = await w.client(w.b.keys.agent).createRun({ taskId: "quota-ops-other-team" });
    expect((await post(w.b.keys.agent, "/api/v1/operations", op(theirs, `quota-op-b-${theirs.runId}`))).status).toBe(201);
    // Another team's run at its limit still answers 404, as a missing one does: the quota leaks nothing.
    expect((await post(w.b.keys.agent, "/api/v1/operations", op(run, `quota-op-probe-${run.runId}`))).status).toBe(404);

    // Once one of the three has ended, the run takes one more.
    const ended = created[1]!.json.operationId as string;
    // The worker is not the run's holder: it presents the run's lease, as a job's stamp carries it.
    expect((await w.client(w.a.keys.worker).admit(ended, { leaseId: run.leaseId })).decision).toBe("allow");
    await w.client(w.a.keys.worker).complete(ended, { outcome: "succeeded", leaseId: run.leaseId });
    expect((await post(w.a.keys.agent, "/api/v1/operations", op(run, `quota-op-more-${run.runId}`))).status).toBe(201);
    expectQuota(await post(w.a.keys.agent, "/api/v1/operations", op(run, `quota-op-over-${run.runId}`)), null, 5);
  });
});

describe("observed reports per run per hour", () => {
  test("past 3 reports on a run, 429 and no audit row; a 409 before the kill does not count; other runs carry on", async () => {
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "quota-observed" });
    const path = `/api/v1/runs/${run.runId}/observed`;
    // Not killed yet: the handler's 409, given back each time.
    for (let i = 0; i < 4; i++) expect((await post(w.a.keys.agent, path, { meaning: "signal_accepted" })).status).toBe(409);
    await w.client(w.a.keys.operator).kill(run.runId, "quota test");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => postWithHeaders(w.a.keys.agent, path, { meaning: "turn_interrupted" })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    for (const r of answers.filter((a) => a.status !== 200)) expectQuota(r, r.headers, 3600);
    const observedRows = () => prisma().auditEvent.count({ where: { teamId: w.a.teamId, action: "barrier.observed" } });
    const rows = await observedRows();
    const snap = await snapshot(w.a.teamId);
    // Another key of the same team reports on the same run: the quota is the run's.
    expectQuota(await post(a2.secret, path, { meaning: "process_terminated" }), null, 3600);
    expect(await observedRows()).toBe(rows);
    expect(await snapshot(w.a.teamId)).toEqual(snap);

    // Another run of the team (another key), and another team's run, take reports as usual.
    const second = await w.client(a2.secret).createRun({ taskId: "quota-observed-2" });
    await w.client(w.a.keys.operator).kill(second.runId, "quota test");
    expect((await post(a2.secret, `/api/v1/runs/${second.runId}/observed`, { meaning: "signal_accepted" })).status).toBe(200);
    const theirs = await w.client(w.b.keys.agent).createRun({ taskId: "quota-observed-b" });
    await w.client(w.b.keys.operator).kill(theirs.runId, "quota test");
    expect((await post(w.b.keys.agent, `/api/v1/runs/${theirs.runId}/observed`, { meaning: "signal_accepted" })).status).toBe(200);
    // Team b probing team a's run at its limit gets 404, as for a missing run.
    expect((await post(w.b.keys.agent, path, { meaning: "signal_accepted" })).status).toBe(404);
  });
});

describe("event streams per key (per process)", () => {
  const open = async (key: string, runId: string) => {
    const ac = new AbortController();
    const res = await fetch(`${w.server.url}/api/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: ac.signal,
    });
    if (res.status === 200) {
      const first = await res.body!.getReader().read();
      expect(new TextDecoder().decode(first.value)).toContain("event: ready");
    }
    return { res, close: () => ac.abort() };
  };

  test("a third stream of one key gets 429 with Retry-After; other keys open theirs; closing one frees its place", async () => {
    const key = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "listener" });
    const run = await w.client(key.secret).createRun({ taskId: "quota-streams" });
    // A refused open (404: a missing run) takes no place.
    expect((await open(key.secret, "run_missing")).res.status).toBe(404);
    expect(openEventStreams(key.id)).toBe(0);
    const s1 = await open(key.secret, run.runId);
    const s2 = await open(key.secret, run.runId);
    expect([s1.res.status, s2.res.status]).toEqual([200, 200]);
    const third = await open(key.secret, run.runId);
    expect(third.res.status).toBe(429);
    expectQuota({ status: third.res.status, json: await third.res.json() }, third.res.headers, 5);

    const other = await open(a2.secret, run.runId);
    expect(other.res.status).toBe(200);
    const theirRun = await w.client(w.b.keys.agent).createRun({ taskId: "quota-streams-b" });
    const theirs = await open(w.b.keys.agent, theirRun.runId);
    expect(theirs.res.status).toBe(200);

    s1.close();
    for (let i = 0; i < 100 && openEventStreams(key.id) > 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(openEventStreams(key.id)).toBe(1);
    const again = await open(key.secret, run.runId);
    expect(again.res.status).toBe(200);
    for (const s of [s2, other, theirs, again]) s.close();
  });
});
