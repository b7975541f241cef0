// The live demo fleet as `npm start` runs it: `quiesce demo` as its own process against the API, the
// simulated deployment provider and the barrier engine as their own processes. It must build live
// release trees at once (preview at deploy-sim, queued check, subagents, scheduled work), keep going
// through an API outage, honour a pause, and a kill of one of its trees must end in a receipt.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeTeam, type TestTeam } from "../api/fixtures";
import { startApiServer, type ApiServer } from "../support/api-server";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { spawnCli, type Child } from "./support/spawn";
import { waitForValue } from "../../lib/platform/wait";

const API_PORT = 3371;
const SIM_PORT = 3372;
let api: ApiServer | null;
let team: TestTeam;
const procs: Child[] = [];

function cli(args: string[], env: Record<string, string>): Child {
  const c = spawnCli(args, env);
  procs.push(c);
  return c;
}

beforeAll(async () => {
  api = await startApiServer({ port: API_PORT });
  team = await makeTeam("demo");
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId: team.teamId,
      name: "deploy-sim",
      kind: "simulated",
      cancelUrl: `http://127.0.0.1:${SIM_PORT}/cancel`,
      statusUrl: `http://127.0.0.1:${SIM_PORT}/status`,
      quietPeriodSeconds: 0,
      settleDeadlineMs: 5000,
      rollbackOwner: "release-oncall",
    },
  });
}, 60_000);
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop("SIGKILL")));
  await api?.close();
  await closeControlListener();
  await prisma().$disconnect();
  await closePool();
}, 60_000);

const until = <T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 90_000) => waitForValue(f, ok, timeoutMs, 250);

describe("quiesce demo", () => {
  test("plays live release trees, survives an API outage, honours pause, and a kill ends in a receipt", async () => {
    try {
      await scenario();
    } catch (err) {
      for (const p of procs)
        console.error(`--- ${p.proc.spawnargs.slice(3).join(" ")}\n${p.out().slice(-4000)}\n${p.stderr().slice(-4000)}`);
      throw err;
    }
  }, 420_000);
});

async function scenario() {
  {
    const env = {
      DATABASE_URL: process.env.DATABASE_URL!,
      QUIESCE_URL: `http://127.0.0.1:${API_PORT}`,
      QUIESCE_API_KEY: team.keys.agent,
      QUIESCE_WORKER_KEY: team.keys.worker,
      QUIESCE_PROVIDER_SIM_URL: `http://127.0.0.1:${SIM_PORT}`,
    };
    const provider = cli(["provider-sim", "--port", String(SIM_PORT)], env);
    const barrier = cli(["barrier-worker", "--poll-ms", "500", "--local-settle-ms", "1000", "--team", team.teamId], env);
    await until(
      async () => provider.out(),
      (t) => t.includes("listening"),
      60_000,
    );
    const demo = cli(["demo", "--every", "2-4", "--initial", "2", "--max-live", "10"], env);

    // Live trees at once: a release root with its two subagents, the preview at deploy-sim, queued and scheduled work.
    const roots = await until(
      () => prisma().run.findMany({ where: { teamId: team.teamId, parentRunId: null, taskId: { startsWith: "release-payments-" } } }),
      (r) => r.length >= 2,
    );
    const root = roots[0]!;
    await until(
      () => prisma().run.count({ where: { rootRunId: root.id, parentRunId: root.id } }),
      (n) => n === 2,
    );
    const preview = await until(
      () => prisma().operation.findFirst({ where: { runId: root.id, tool: "deployment.reserve_preview" } }),
      (o) => o?.state === "running",
    );
    expect(preview).toMatchObject({ providerName: "deploy-sim", providerJobId: expect.stringMatching(/^preview-/) });
    const treeOps = () => prisma().operation.findMany({ where: { run: { rootRunId: root.id } } });
    const ops = await until(treeOps, (os) => os.some((o) => o.tool === "db.compatibility_check") && os.some((o) => o.kind === "scheduled"));
    expect(ops.find((o) => o.tool === "db.compatibility_check")?.providerName).toBe("pg-boss:demo-db-checks");
    const simJob = await (await fetch(`http://127.0.0.1:${SIM_PORT}/jobs/${preview!.providerJobId}`)).json();
    expect(simJob).toMatchObject({ state: "running", runId: root.id });

    // The API goes away and comes back: the fleet logs it, backs off and continues (new runs appear).
    await api!.close();
    api = null;
    await until(
      async () => demo.out(),
      (t) => t.includes("unreachable"),
      60_000,
    );
    const before = await prisma().run.count({ where: { teamId: team.teamId, parentRunId: null } });
    api = await startApiServer({ port: API_PORT });
    await until(
      () => prisma().run.count({ where: { teamId: team.teamId, parentRunId: null } }),
      (n) => n > before,
      90_000,
    );
    expect(demo.out()).toContain("reachable again");
    expect(demo.proc.exitCode).toBeNull();

    // An operator pauses a live tree: its next calls hold (recorded by the gate), nothing new starts.
    const operator = new QuiesceClient({ url: `http://127.0.0.1:${API_PORT}`, apiKey: team.keys.operator, timeoutMs: 20_000 });
    const live = await until(
      () =>
        prisma().run.findFirst({
          where: { teamId: team.teamId, parentRunId: null, lifecycle: "normal", createdAt: { gt: root.createdAt } },
          orderBy: { createdAt: "desc" },
        }),
      (r) => !!r,
    );
    await operator.pause(live!.id, "demo check: pause");
    const holdsInTree = async () => {
      const ids = (await prisma().run.findMany({ where: { rootRunId: live!.id }, select: { id: true } })).map((r) => r.id);
      return prisma().gateDecision.count({ where: { decision: "hold", runId: { in: ids } } });
    };
    await until(holdsInTree, (n) => n > 0, 120_000);

    // Kill a tree whose preview is in flight: the call is aborted and settled at deploy-sim, and a
    // receipt is issued.
    const inFlight = await until(
      () =>
        prisma().operation.findFirst({
          where: { teamId: team.teamId, tool: "deployment.reserve_preview", state: "running" },
          include: { run: true },
        }),
      (o) => !!o,
      120_000,
    );
    const target = inFlight!.run;
    const { barrierId } = await operator.kill(target.id, "wrong commit in the release run");
    const receipt = await until(
      () => operator.getReceipt(barrierId).catch(() => null),
      (r) => r !== null,
      120_000,
    );
    expect(receipt).toMatchObject({ barrier_id: barrierId, run_id: target.id });
    expect(["stopped_and_quiet", "stop_incomplete"]).toContain(receipt!.decision);
    const settled = await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: inFlight!.id } });
    expect(settled.cancelRequestedAt).not.toBeNull();
    expect(settled.settledState).not.toBeNull();

    expect(await demo.stop("SIGTERM")).toBe(0);
    await barrier.stop("SIGTERM");
    await provider.stop("SIGTERM");
  }
}
