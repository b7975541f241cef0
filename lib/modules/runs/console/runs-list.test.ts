// The runs list, the run timeline and saved views against a real PostgreSQL (docs/console.md#runs-list):
// every filter returns exactly its runs, cursor pages cover the list once each way (also while runs
// are registered between pages), children group under their roots, bad URL parameters are ignored
// (never an error), another team sees nothing, and saved views stay their owner's.
import { beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../platform/db/prisma";
import { newId } from "../../../platform/ids";
import { QuiesceError } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";
import { ACTIVITY_WALK, COUNT_CAP, listConsoleRuns, listMatchingRunIds, type RunsFilter } from "./runs";
import { listRunTimeline } from "./timeline";
import { createSavedView, deleteSavedView, listSavedViews } from "./saved-views";
import { runsView } from "./views";
import { decodeRunsCursor, encodeRunsCursor, parseRunsQuery, stopFilterOf, viewQueryString } from "../../../schemas/runs-list";
import { previewStop } from "../../stop/stops";
import { appendAudit } from "../../audit/audit";
import fc from "fast-check";
import { LIVE_ACTIVITIES, runActivity, type ActivityFacts } from "../../../control/activity";

type User = Extract<Principal, { type: "user" }>;
let a: User, a2: User, b: User;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

async function team(slug: string, role: User["role"] = "viewer"): Promise<User> {
  const s = `${slug}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const t = await prisma().team.create({ data: { id: newId("team"), slug: s, name: slug } });
  return member(t.id, slug, role);
}
async function member(teamId: string, slug: string, role: User["role"]): Promise<User> {
  const u = await prisma().user.create({ data: { id: newId("user"), email: `${slug}-${newId("user")}@example.test`, name: slug } });
  await prisma().membership.create({ data: { id: newId("mem"), teamId, userId: u.id, role } });
  return { type: "user", userId: u.id, email: u.email, teamId, role };
}

interface Spec {
  title: string;
  minute: number;
  harness?: "claude_code" | "codex" | "mcp" | "custom";
  lifecycle?: "normal" | "paused" | "killed";
  finished?: boolean;
  agent?: string;
  task?: string;
  parent?: string;
}
async function run(teamId: string, s: Spec): Promise<string> {
  const id = newId("run");
  const parent = s.parent ? await prisma().run.findUniqueOrThrow({ where: { id: s.parent } }) : null;
  await prisma().run.create({
    data: {
      id,
      teamId,
      taskId: s.task ?? `task-${s.title}`,
      title: s.title,
      parentRunId: parent?.id ?? null,
      rootRunId: parent?.rootRunId ?? id,
      path: [...(parent?.path ?? []), id],
      depth: parent ? parent.depth + 1 : 0,
      harness: s.harness ?? "custom",
      lifecycle: s.lifecycle ?? "normal",
      finishedAt: s.finished ? at(s.minute + 1) : null,
      nativeAgentId: s.agent ?? null,
      createdAt: at(s.minute),
    },
  });
  return id;
}

const titles = async (p: Principal, f: RunsFilter) => (await listConsoleRuns(p, { pageSize: 100, ...f })).items.map((r) => r.title);

let root: string, child1: string, child2: string, grandchild: string;
beforeAll(async () => {
  a = await team("list-a");
  a2 = await member(a.teamId, "list-a2", "operator");
  b = await team("list-b");
  root = await run(a.teamId, { title: "root", minute: 0, harness: "codex", agent: "agent-1" });
  child1 = await run(a.teamId, { title: "child1", minute: 1, parent: root, harness: "codex" });
  child2 = await run(a.teamId, { title: "child2", minute: 2, parent: root, lifecycle: "paused" });
  grandchild = await run(a.teamId, { title: "grandchild", minute: 3, parent: child1 });
  await run(a.teamId, { title: "paused", minute: 4, lifecycle: "paused", harness: "mcp" });
  await run(a.teamId, { title: "killed", minute: 5, lifecycle: "killed", agent: "agent-1" });
  await run(a.teamId, { title: "finished", minute: 6, finished: true, harness: "claude_code" });
  await run(a.teamId, { title: "killed-finished", minute: 7, lifecycle: "killed", finished: true });
  await run(a.teamId, { title: "pct", minute: 8, task: "deploy 100%_done" });
  await run(a.teamId, { title: "pct-lookalike", minute: 9, task: "deploy 100x-done" });
  await run(b.teamId, { title: "bravo", minute: 0, harness: "codex", agent: "agent-1" });
});

describe("runs list filters", () => {
  it("filters by status exactly as a fleet stop reads it (killed wins over finished)", async () => {
    expect(await titles(a, { status: "active" })).toEqual(["pct-lookalike", "pct", "grandchild", "child1", "root"]);
    expect(await titles(a, { status: "paused" })).toEqual(["paused", "child2"]);
    expect(await titles(a, { status: "killed" })).toEqual(["killed-finished", "killed"]);
    expect(await titles(a, { status: "finished" })).toEqual(["finished"]);
  });

  it("filters by harness, agent, time range and lifecycle, and combines them", async () => {
    expect(await titles(a, { harness: "codex" })).toEqual(["child1", "root"]);
    expect(await titles(a, { agent: "agent-1" })).toEqual(["killed", "root"]);
    expect(await titles(a, { from: at(2), to: at(5) })).toEqual(["paused", "grandchild", "child2"]);
    expect(await titles(a, { lifecycle: "paused", harness: "mcp" })).toEqual(["paused"]);
    expect(await titles(a, { agent: "agent-1", status: "active" })).toEqual(["root"]);
  });

  it("searches ids exactly and task/title by substring, % and _ literal", async () => {
    expect(await titles(a, { q: "100%_" })).toEqual(["pct"]);
    expect(await titles(a, { q: root })).toEqual(["grandchild", "child2", "child1", "root"]); // the root run id names its tree
    expect(await titles(a, { q: "CHILD" })).toEqual(["grandchild", "child2", "child1"]);
  });

  it("sorts newest, oldest and by task", async () => {
    const all = await titles(a, {});
    expect(await titles(a, { sort: "oldest" })).toEqual([...all].reverse());
    const byTask = (await listConsoleRuns(a, { sort: "task", pageSize: 100 })).items.map((r) => r.taskId);
    expect(byTask).toEqual([...byTask].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
  });

  it("groups: roots only with their children counts, and each run's direct children", async () => {
    const roots = await listConsoleRuns(a, { rootsOnly: true, pageSize: 100 });
    expect(roots.items.map((r) => r.title)).not.toContain("child1");
    expect(roots.items.find((r) => r.runId === root)?.childCount).toBe(2);
    expect(await titles(a, { parentRunId: root, sort: "oldest" })).toEqual(["child1", "child2"]);
    expect(await titles(a, { parentRunId: child1 })).toEqual(["grandchild"]);
    expect((await listConsoleRuns(a, { parentRunId: child1 })).items[0]).toMatchObject({ runId: grandchild, depth: 2, rootRunId: root });
    expect(child2).toBeTruthy();
  });
});

describe("cursor paging", () => {
  it("walks every page forwards and backwards, each run once, stable while runs are registered", async () => {
    const t = await team("pages");
    for (let i = 0; i < 23; i++) await run(t.teamId, { title: `p${String(i).padStart(2, "0")}`, minute: i % 7 }); // ties on created_at
    const expected = (await listConsoleRuns(t, { pageSize: 100 })).items.map((r) => r.runId);
    expect(expected).toHaveLength(23);

    const pages: string[][] = [];
    const used: (string | null)[] = [];
    let cursor: string | null = null;
    let late = "";
    do {
      const page = await listConsoleRuns(t, { pageSize: 5, cursor: cursor ? decodeRunsCursor(cursor)! : undefined });
      expect(page.total).toBe(23 + (late ? 1 : 0));
      used.push(cursor);
      pages.push(page.items.map((r) => r.runId));
      if (!late) {
        // A run registered after the first page is newer: it does not shift what the next pages show.
        expect(page.prevCursor).toBeNull();
        late = await run(t.teamId, { title: "late", minute: 100 });
      }
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.flat()).toEqual(expected);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);

    // Backwards from the last page by prevCursor: the same pages, then the run registered meanwhile.
    const last = await listConsoleRuns(t, { pageSize: 5, cursor: decodeRunsCursor(used[4]!)! });
    expect(last.items.map((r) => r.runId)).toEqual(pages[4]);
    expect(last.nextCursor).toBeNull();
    let prev = last.prevCursor;
    const back: string[][] = [];
    while (prev) {
      const page = await listConsoleRuns(t, { pageSize: 5, cursor: decodeRunsCursor(prev)! });
      back.unshift(page.items.map((r) => r.runId));
      expect(page.nextCursor).not.toBeNull();
      prev = page.prevCursor;
    }
    expect(back).toEqual([[late], ...pages.slice(0, 4)]);
  });

  it("pages each sort, and a cursor of another sort or a forged one is ignored, never an error", async () => {
    const walk = async (sort: "oldest" | "task") => {
      const ids: string[] = [];
      let c: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof listConsoleRuns>> = await listConsoleRuns(a, {
          pageSize: 5,
          sort,
          cursor: c ? decodeRunsCursor(c)! : undefined,
        });
        ids.push(...page.items.map((r) => r.runId));
        c = page.nextCursor;
      } while (c);
      return ids;
    };
    expect(await walk("oldest")).toEqual((await listConsoleRuns(a, { sort: "oldest", pageSize: 100 })).items.map((r) => r.runId));
    expect(await walk("task")).toEqual((await listConsoleRuns(a, { sort: "task", pageSize: 100 })).items.map((r) => r.runId));

    const newest = await listConsoleRuns(a, { pageSize: 5 });
    const p = parseRunsQuery({ sort: "task", cursor: newest.nextCursor! });
    expect(p.ignored).toEqual([{ key: "cursor", message: "issued for another sort" }]);
    expect((await runsView(a, p)).items.length).toBeGreaterThan(0);
  });
});

describe("URL parameters", () => {
  it("ignores each bad parameter by name and keeps the good ones", () => {
    const p = parseRunsQuery({
      status: "sleeping",
      harness: "codex",
      from: "yesterday",
      to: "0000-01-01",
      cursor: "not-a-cursor",
      q: "a\u0000b",
      agent: "x".repeat(500),
      sort: "random",
      roots: "1",
      page: "7",
    });
    expect(p.query).toEqual({ harness: "codex", roots: true });
    expect(p.ignored.map((i) => i.key).sort()).toEqual(["agent", "cursor", "from", "q", "sort", "status", "to"]);
    expect(parseRunsQuery({ from: "2026-06-02", to: "2026-06-01" }).ignored).toEqual([{ key: "to", message: "must be later than from" }]);
    const forged = Buffer.from(JSON.stringify(["a", "newest", "not a time", "run_x"])).toString("base64url");
    expect(decodeRunsCursor(forged)).toBeNull();
    expect(
      decodeRunsCursor(Buffer.from(JSON.stringify(["a", "newest", "+275760-09-13T00:00:00.000Z", "r"])).toString("base64url")),
    ).toBeNull();
    const ok = encodeRunsCursor({ dir: "before", sort: "task", value: "tâsk 1", id: "run_1" });
    expect(decodeRunsCursor(ok)).toEqual({ dir: "before", sort: "task", value: "tâsk 1", id: "run_1" });
  });

  it("answers a page (no error) for every mangled query the page may receive", async () => {
    for (const raw of [
      { cursor: Buffer.from('["a","newest","2026-01-01T00:00:00Z","\\u0000"]').toString("base64url") },
      { q: "%%%___\\\\" },
      { from: "2026-02-30" },
      { to: "9999-12-31T23:59:59Z" },
      { status: ["paused", "killed"] as unknown as string },
    ]) {
      const page = await runsView(a, parseRunsQuery(raw));
      expect(Array.isArray(page.items)).toBe(true);
    }
  });

  it("normalizes a view's query: known, valid filters only, fixed order, no cursor", () => {
    expect(viewQueryString(new URLSearchParams("cursor=abc&harness=codex&evil=1&status=paused&sort=bogus&q=x%25"))).toBe(
      "status=paused&harness=codex&q=x%25",
    );
  });
});

describe("authorization", () => {
  it("another team's member sees none of these runs, children or timelines", async () => {
    expect((await listConsoleRuns(b, { pageSize: 100 })).items.map((r) => r.title)).toEqual(["bravo"]);
    expect((await listConsoleRuns(b, { q: root })).total).toBe(0);
    expect((await listConsoleRuns(b, { parentRunId: root })).items).toEqual([]);
    expect((await listConsoleRuns(b, { agent: "agent-1" })).items.map((r) => r.title)).toEqual(["bravo"]);
    await expect(listRunTimeline(b, root, {})).rejects.toSatisfy((e) => e instanceof QuiesceError && e.code === "not_found");
    await expect(listConsoleRuns({ type: "system", name: "t" }, {})).rejects.toSatisfy(
      (e) => e instanceof QuiesceError && e.code === "forbidden",
    );
  });
});

describe("count", () => {
  it(`counts exactly up to ${COUNT_CAP}, then says so`, async () => {
    const t = await team("many");
    await prisma().$executeRawUnsafe(
      `INSERT INTO runs (id, team_id, task_id, root_run_id, path, lifecycle, created_at)
       SELECT $1 || '_' || g, $1, 't', $1 || '_' || g, ARRAY[$1 || '_' || g], (CASE WHEN g % 2 = 0 THEN 'paused' ELSE 'normal' END)::"Lifecycle",
              now() - g * interval '1 second'
         FROM generate_series(1, $2) AS g`,
      t.teamId,
      COUNT_CAP + 10,
    );
    const all = await listConsoleRuns(t, {});
    expect(all).toMatchObject({ total: COUNT_CAP, totalCapped: true });
    expect(await listConsoleRuns(t, { status: "paused" })).toMatchObject({ total: (COUNT_CAP + 10) / 2, totalCapped: false });
    // An activity count judges the newest ACTIVITY_WALK runs (half of them live, none with a lease: stale) and says "N+".
    expect(await listConsoleRuns(t, { activity: "stale" })).toMatchObject({ total: ACTIVITY_WALK / 2, totalCapped: true });
    // No idle run at all: each page judges at most ACTIVITY_WALK runs and continues where its walk ended, to the end.
    let page = await listConsoleRuns(t, { activity: "idle" });
    const walks: number[] = [];
    while (page.nextCursor) {
      expect(page.items).toEqual([]);
      walks.push(1);
      page = await listConsoleRuns(t, { activity: "idle", cursor: decodeRunsCursor(page.nextCursor)! });
    }
    expect(page.items).toEqual([]);
    expect(walks).toHaveLength(Math.floor((COUNT_CAP + 10) / ACTIVITY_WALK));
    // Stale runs fill a page at once, and the next page follows its last row.
    const first = await listConsoleRuns(t, { activity: "stale" });
    const second = await listConsoleRuns(t, { activity: "stale", cursor: decodeRunsCursor(first.nextCursor!)! });
    expect(first.items).toHaveLength(50);
    expect(second.items[0]!.createdAt < first.items[49]!.createdAt).toBe(true);
  });
});

describe("run timeline", () => {
  it("merges decisions, operations, control events and acknowledgments, newest first, paged by cursor", async () => {
    const db = prisma();
    const opId = newId("op");
    await db.operation.create({
      data: {
        id: opId,
        teamId: a.teamId,
        operationId: "deploy-1",
        runId: child1,
        epochStamp: 1,
        kind: "call",
        tool: "deploy",
        state: "running",
        createdAt: at(10),
      },
    });
    for (let i = 0; i < 7; i++)
      await db.gateDecision.create({
        data: { teamId: a.teamId, runId: child1, decision: i === 6 ? "deny" : "allow", reason: i === 6 ? "run_killed" : "ok", at: at(11) },
      });
    await db.$transaction((tx) =>
      appendAudit(tx, { teamId: a.teamId, actor: `user:${a2.userId}`, action: "run.pause", target: child1, after: { reason: "look" } }),
    );
    const barrierId = newId("stop");
    await db.barrier.create({
      data: {
        id: barrierId,
        teamId: a.teamId,
        runId: root,
        requestedBy: `user:${a2.userId}`,
        reason: "t",
        newEpoch: 2,
        policy: {},
        observedAt: at(12),
        observedMeaning: "signal_accepted",
        observedEvidence: [
          { runId: child1, meaning: "signal_accepted", at: at(12).toISOString(), by: "key:agent" },
          { runId: child2, meaning: "turn_interrupted", at: at(12).toISOString(), by: "key:agent" },
        ],
      },
    });
    // Another team's audit row about the same id is not this run's history.
    await db.$transaction((tx) => appendAudit(tx, { teamId: b.teamId, actor: "x", action: "run.pause", target: child1 }));

    const all: string[] = [];
    const kinds = new Set<string>();
    const times: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listRunTimeline(a, child1, { limit: 5, cursor });
      for (const e of page.items) {
        all.push(e.key);
        kinds.add(e.kind);
        times.push(Date.parse(e.at));
      }
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(7 + 1 + 1 + 1);
    expect([...kinds].sort()).toEqual(["ack", "control", "decision", "operation"]);
    expect(times).toEqual([...times].sort((x, y) => y - x));
    const first = await listRunTimeline(a, child1, { limit: 50 });
    expect(first.items.find((e) => e.kind === "ack")).toMatchObject({
      title: "observed by target: signal_accepted",
      link: `/barriers/${barrierId}`,
    });
    expect(first.items.find((e) => e.kind === "control")).toMatchObject({ title: "run.pause", detail: "look", actor: `user:${a2.userId}` });
    await expect(listRunTimeline(a, child1, { cursor: "garbage" })).rejects.toSatisfy(
      (e) => e instanceof QuiesceError && e.code === "bad_request",
    );
  });
});

describe("saved views", () => {
  it("belong to their member: create (normalized, audited), list, duplicate refused, delete", async () => {
    const v = await createSavedView(a, { name: " Paused codex ", query: "?harness=codex&status=paused&cursor=zzz&junk=1" });
    expect(v).toMatchObject({ name: "Paused codex", query: "status=paused&harness=codex" });
    expect((await listSavedViews(a)).map((x) => x.id)).toEqual([v.id]);
    expect(await listSavedViews(a2)).toEqual([]); // a colleague in the same team does not see it
    expect(await listSavedViews(b)).toEqual([]);
    await expect(createSavedView(a, { name: "Paused codex", query: "" })).rejects.toSatisfy(
      (e) => e instanceof QuiesceError && e.code === "conflict",
    );
    await expect(deleteSavedView(a2, v.id)).rejects.toSatisfy((e) => e instanceof QuiesceError && e.code === "not_found");
    await expect(deleteSavedView(b, v.id)).rejects.toSatisfy((e) => e instanceof QuiesceError && e.code === "not_found");
    await deleteSavedView(a, v.id);
    expect(await listSavedViews(a)).toEqual([]);
    const audit = await prisma().auditEvent.findMany({ where: { teamId: a.teamId, target: v.id }, orderBy: { id: "asc" } });
    expect(audit.map((e) => e.action)).toEqual(["view.create", "view.delete"]);
    await expect(listSavedViews({ type: "system", name: "t" })).rejects.toSatisfy(
      (e) => e instanceof QuiesceError && e.code === "forbidden",
    );
  });
});

describe("activity (working, idle, stale)", () => {
  /** A run whose activity facts are `f` (times relative to now), written as the gate and registration write them. */
  async function runWith(teamId: string, title: string, f: ActivityFacts): Promise<string> {
    const id = newId("run");
    const db = prisma();
    await db.run.create({
      data: {
        id,
        teamId,
        taskId: `task-${title}`,
        title,
        rootRunId: id,
        path: [id],
        lifecycle: f.lifecycle,
        finishedAt: f.finishedAt === null ? null : new Date(f.finishedAt),
        createdAt: new Date(f.createdAt),
        lastHeartbeatAt: f.lastHeartbeatAt === null ? null : new Date(f.lastHeartbeatAt),
      },
    });
    if (f.lease) {
      const l = newId("lease");
      await db.lease.create({
        data: {
          id: l,
          teamId,
          runId: id,
          path: [l],
          scopes: ["*"],
          validUntil: new Date(f.lease.validUntil),
          ttlSeconds: f.lease.ttlSeconds,
          revokedAt: f.lease.revoked ? new Date(f.createdAt) : null,
        },
      });
    }
    for (let i = 0; i < f.running; i++) {
      const op = newId("op");
      await db.operation.create({
        data: {
          id: op,
          teamId,
          operationId: op,
          runId: id,
          epochStamp: 1,
          kind: "call",
          tool: "deploy",
          state: "running",
          startedAt: new Date(f.createdAt),
        },
      });
    }
    if (f.lastDecisionAt !== null)
      await db.gateDecision.createMany({
        data: [f.lastDecisionAt - 3_600_000, f.lastDecisionAt].map((t) => ({
          teamId,
          runId: id,
          source: "gate",
          decision: "allow" as const,
          reason: "ok",
          at: new Date(t),
        })),
      });
    return id;
  }

  it("reads each run's activity from its facts, and last heard from is true for a run with calls in flight", async () => {
    const t = await team("activity");
    const now = Date.now();
    const min = 60_000;
    const base: ActivityFacts = {
      lifecycle: "normal",
      finishedAt: null,
      running: 0,
      createdAt: now - 120 * min,
      lastHeartbeatAt: null,
      lastDecisionAt: null,
      lease: { validUntil: now + 20 * 60 * min, ttlSeconds: 86_400, revoked: false },
    };
    await runWith(t.teamId, "in-flight", { ...base, running: 2, lastDecisionAt: now - 10 * min });
    await runWith(t.teamId, "just-called", { ...base, lastDecisionAt: now - 5_000 });
    await runWith(t.teamId, "waiting", { ...base, lastDecisionAt: now - 5 * min });
    await runWith(t.teamId, "hour-old-heartbeat", { ...base, lastHeartbeatAt: now - 60 * min });
    await runWith(t.teamId, "lease-lapsed", { ...base, lastDecisionAt: now - 2 * min, lease: { ...base.lease!, validUntil: now - min } });
    // No decision kept, but the lease was renewed ten minutes ago (validUntil − ttl): heard from then.
    await runWith(t.teamId, "lease-renewed", { ...base, lease: { ...base.lease!, validUntil: now - 10 * min + 86_400_000 } });
    await runWith(t.teamId, "paused-in-flight", { ...base, lifecycle: "paused", running: 1 });
    const page = await listConsoleRuns(t, { pageSize: 100 });
    const by = Object.fromEntries(page.items.map((r) => [r.title, r]));
    expect(Object.fromEntries(page.items.map((r) => [r.title, r.activity]))).toEqual({
      "in-flight": "working",
      "just-called": "working",
      waiting: "idle",
      "hour-old-heartbeat": "stale",
      "lease-lapsed": "stale",
      "lease-renewed": "idle",
      "paused-in-flight": "paused",
    });
    // Never a heartbeat, but its calls are in flight: heard from at its last gate call, not "never".
    expect(by["in-flight"]).toMatchObject({ running: 2, lastHeartbeatAt: null });
    expect(Date.parse(by["in-flight"]!.lastHeardAt)).toBe(now - 10 * min);
    expect((await titles(t, { activity: "working" })).sort()).toEqual(["in-flight", "just-called"]);
    expect((await titles(t, { activity: "idle" })).sort()).toEqual(["lease-renewed", "waiting"]);
    // "Select all N matching (by run id)" names exactly the runs of that activity.
    const ids = await listMatchingRunIds({ ...t, role: "operator" }, { activity: "working" });
    expect(ids.ids.sort()).toEqual(
      page.items
        .filter((r) => r.activity === "working")
        .map((r) => r.runId)
        .sort(),
    );
    expect((await listConsoleRuns(t, { activity: "stale" })).total).toBe(2);
    expect(await titles(t, { activity: "idle", status: "paused" })).toEqual([]);
  });

  it("the list's filter (SQL) agrees with the rule (lib/control/activity.ts) on generated runs", async () => {
    const t = await team("activity-oracle");
    const now = Date.now();
    const ago = (max: number) => fc.integer({ min: 0, max }).map((d) => now - d);
    const facts = fc.sample(
      fc.record<ActivityFacts>({
        lifecycle: fc.constantFrom("normal", "normal", "normal", "paused", "killed"),
        finishedAt: fc.option(ago(3_600_000), { freq: 6 }),
        running: fc.constantFrom(0, 0, 0, 1),
        createdAt: ago(7_200_000),
        lastHeartbeatAt: fc.option(ago(3_600_000)),
        lastDecisionAt: fc.option(ago(1_800_000)),
        lease: fc.option(
          fc.record({
            validUntil: fc.integer({ min: now - 600_000, max: now + 86_400_000 }),
            ttlSeconds: fc.constantFrom(60, 600, 3600, 86_400),
            revoked: fc.boolean(),
          }),
          { freq: 6 },
        ),
      }),
      { numRuns: 60, seed: 7 },
    );
    const expected = new Map<string, string>();
    for (const [i, f] of facts.entries()) expected.set(await runWith(t.teamId, `g${i}`, f), runActivity(f, now));
    const all = (await listConsoleRuns(t, { pageSize: 100 })).items;
    expect(all).toHaveLength(facts.length);
    const seen = new Set<string>();
    for (const activity of LIVE_ACTIVITIES) {
      const items = (await listConsoleRuns(t, { pageSize: 100, activity })).items;
      // The SQL judged at its own instant, the rule at the row's: each row it returned reads as what it filtered on.
      for (const r of items) expect([r.runId, r.activity]).toEqual([r.runId, activity]);
      for (const r of items) seen.add(r.runId);
    }
    // Every live run is in exactly one of the three (the generated facts keep clear of the boundaries by seconds).
    const live = [...expected].filter(([, a]) => (LIVE_ACTIVITIES as readonly string[]).includes(a)).map(([id]) => id);
    expect([...seen].sort()).toEqual(live.sort());
  });
});

describe("select all matching → fleet stop", () => {
  it("the list's filters as a stop filter cover the same runs the list shows (and what they delegated)", async () => {
    const op = { ...a, role: "operator" as const };
    const preview = async (raw: Record<string, string>) => {
      const f = stopFilterOf(parseRunsQuery(raw).query);
      if (!f) return null;
      const r = await previewStop(op, { action: "pause", filter: f, reason: "t", dryRun: true });
      return r.sample.map((s) => s.runId).sort();
    };
    const ids = async (f: RunsFilter) => (await listConsoleRuns(a, { pageSize: 100, ...f })).items.map((r) => r.runId).sort();
    // harness=codex: root and child1 match; child2 and grandchild are covered as what they delegated.
    expect(await preview({ harness: "codex" })).toEqual([...(await ids({ harness: "codex" })), child2, grandchild].sort());
    expect(await preview({ status: "paused" })).toEqual(await ids({ status: "paused" }));
    expect(await preview({ agent: "agent-1", status: "active" })).toEqual(
      [...(await ids({ agent: "agent-1", status: "active" })), child1, child2, grandchild].sort(),
    );
    expect(await preview({ from: at(4).toISOString(), to: at(6).toISOString() })).toEqual(
      await ids({ status: "paused", from: at(4), to: at(6) }),
    );
    expect(await preview({ q: "x" })).toBeNull();
    expect(await preview({ breaker: "open" })).toBeNull();
    expect(await preview({ status: "paused", lifecycle: "paused" })).toBeNull();
    expect(await preview({ activity: "working" })).toBeNull(); // a moment, not a rule: stopped by run id
  });
});
