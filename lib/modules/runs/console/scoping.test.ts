// The console's read models against a real PostgreSQL: each member sees their own team and nothing of
// another team — not in lists, not by id (404, like a missing id), not even a colleague's email.
import { beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../platform/db/prisma";
import { newId } from "../../../platform/ids";
import { QuiesceError } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";
import { listConsoleRuns } from "./runs";
import { assertRunVisible, getRunDetail } from "./run-detail";
import { getConsoleBarrier } from "../../stop/console/barrier";
import { getConsoleReceipt } from "../../stop/console/receipt";
import { listOpenWork, listTeamMembers } from "../../stop/console/reconciliations";
import { listConsoleAudit } from "../../audit/console";
import { actorLabels } from "../../members/console/people";

type User = Extract<Principal, { type: "user" }>;
let a: User, b: User, viewerA: User;
let runA: string, childA: string, runB: string, barrierB: string, userB: string;

async function team(slug: string) {
  const t = await prisma().team.create({ data: { id: newId("team"), slug: `${slug}-${Date.now().toString(36)}`, name: slug } });
  const u = await prisma().user.create({
    data: { id: newId("user"), email: `${slug}-${Date.now().toString(36)}@example.test`, name: slug },
  });
  await prisma().membership.create({ data: { id: newId("mem"), teamId: t.id, userId: u.id, role: "operator" } });
  return { t, u };
}

async function run(teamId: string, title: string, parent?: { id: string; rootRunId: string; path: string[] }) {
  const id = newId("run");
  const rootRunId = parent?.rootRunId ?? id;
  await prisma().run.create({
    data: {
      id,
      teamId,
      taskId: "task",
      title,
      parentRunId: parent?.id ?? null,
      rootRunId,
      path: [...(parent?.path ?? []), id],
      depth: parent ? parent.path.length : 0,
    },
  });
  return { id, rootRunId, path: [...(parent?.path ?? []), id] };
}

beforeAll(async () => {
  const A = await team("alpha");
  const B = await team("bravo");
  userB = B.u.id;
  a = { type: "user", userId: A.u.id, email: A.u.email, teamId: A.t.id, role: "operator" };
  viewerA = { ...a, role: "viewer" };
  b = { type: "user", userId: B.u.id, email: B.u.email, teamId: B.t.id, role: "operator" };
  const rootA = await run(A.t.id, "alpha root");
  runA = rootA.id;
  childA = (await run(A.t.id, "alpha child", rootA)).id;
  const rootB = await run(B.t.id, "bravo root");
  runB = rootB.id;
  barrierB = newId("stop");
  await prisma().barrier.create({
    data: { id: barrierB, teamId: B.t.id, runId: runB, requestedBy: `user:${B.u.id}`, reason: "test", newEpoch: 2, policy: {} },
  });
});

const notFound = (p: Promise<unknown>) => expect(p).rejects.toSatisfy((e) => e instanceof QuiesceError && e.code === "not_found");

describe("console read models are team-scoped", () => {
  it("lists only the member's own team's runs, searchable by id", async () => {
    const mine = await listConsoleRuns(a, { pageSize: 100 });
    const ids = mine.items.map((r) => r.runId);
    expect(ids).toEqual(expect.arrayContaining([runA, childA]));
    expect(ids).not.toContain(runB);
    expect((await listConsoleRuns(a, { q: runB })).total).toBe(0);
    expect((await listConsoleRuns(b, { q: runB })).items.map((r) => r.runId)).toEqual([runB]);
    expect((await listConsoleRuns(a, { rootsOnly: true, pageSize: 100 })).items.map((r) => r.runId)).not.toContain(childA);
  });

  it("shows the whole tree from any node, and 404s another team's run exactly like a missing one", async () => {
    const d = await getRunDetail(a, childA);
    expect(d.tree.map((n) => n.runId).sort()).toEqual([runA, childA].sort());
    expect(d.run.rootRunId).toBe(runA);
    await notFound(getRunDetail(a, runB));
    await notFound(getRunDetail(a, "run_missing"));
    await notFound(assertRunVisible(a, runB));
    await expect(assertRunVisible(b, runB)).resolves.toBeUndefined();
  });

  it("carries the harness's native identities to the run page", async () => {
    await prisma().run.update({
      where: { id: childA },
      data: { harness: "claude_code", nativeSessionId: "sess-1", nativeAgentId: "agent-7", lastNativeState: "tool_use" },
    });
    const d = await getRunDetail(a, childA);
    expect(d.run).toMatchObject({
      harness: "claude_code",
      native: { sessionId: "sess-1", agentId: "agent-7" },
      lastNativeState: "tool_use",
    });
  });

  it("404s another team's barrier and receipt", async () => {
    await notFound(getConsoleBarrier(a, barrierB));
    await notFound(getConsoleReceipt(a, barrierB));
    const own = await getConsoleBarrier(b, barrierB);
    expect(own.ladder[0]).toMatchObject({ id: "cancellation_requested", status: "done" });
    expect(await getConsoleReceipt(b, barrierB)).toBeNull(); // no receipt issued yet
  });

  it("never resolves another team's people or lists them as assignees", async () => {
    const labels = await actorLabels(a, [`user:${userB}`, `user:${a.userId}`]);
    expect(labels[`user:${userB}`]).toBe(`user:${userB}`);
    expect(labels[`user:${a.userId}`]).toBe(a.email);
    expect((await listTeamMembers(a)).map((m) => m.id)).toEqual([a.userId]);
    expect(await listOpenWork(a, { status: "all" })).toEqual({ reconciliations: [], recoveries: [] });
  });

  it("refuses the audit log to a viewer and system principals without a team", async () => {
    await expect(listConsoleAudit(viewerA, {})).rejects.toSatisfy((e) => e instanceof QuiesceError && e.code === "forbidden");
    await expect(listConsoleRuns({ type: "system", name: "test" }, {})).rejects.toSatisfy(
      (e) => e instanceof QuiesceError && e.code === "forbidden",
    );
    expect((await listConsoleAudit(a, {})).items.every((e) => e.id)).toBe(true);
  });
});
