// `quiesce drill` against a running Quiesce (the real route handlers over HTTP, a real database):
// the cases pass, every run they register is marked as a drill run, the evidence links point at the
// receipt, a drill whose operator key may not kill fails with exit 1, bad flags exit 2, and
// `drill setup` sets a team aside whose keys then work.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { runDrill, selectCases } from "../../lib/drill/drill-run";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { makeWorld, type World } from "../api/fixtures";
import { runCliAll, CLI_TEST_TIMEOUT } from "../cli/run-cli";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
}, 60_000);
afterAll(async () => {
  await closeControlListener();
  await w?.close();
});

describe("quiesce drill", () => {
  test("fleet stop with runs created during the stop: passes against the API (real gate, real barrier engine)", async () => {
    // The real barrier engine, in this process, for this team (short quiet period), for the fleet receipt.
    await setTeamStopSettings({ type: "system", name: "test" }, w.a.teamId, { quietPeriodMs: 200 });
    const ac = new AbortController();
    const engine = runBarrierWorker({
      teamId: w.a.teamId,
      signal: ac.signal,
      pollMs: 200,
      claimMs: 3000,
      localSettleMs: 300,
      listen: true,
    });
    const report = await runDrill(
      {
        url: w.server.url,
        operatorKey: w.a.keys.operator,
        agentKey: w.a.keys.agent,
        provider: "deploy-sim",
        receiptTimeoutMs: 60_000,
        log: () => {},
      },
      selectCases(["fleet_stop_with_runs_created_during_the_stop"]),
    );
    const c = report.cases[0]!;
    expect({ status: c.status, observed: c.observed, failed: c.checks.filter((k) => !k.ok), note: c.note }).toMatchObject({
      status: "pass",
      observed: "deny_killed",
      failed: [],
    });
    ac.abort();
    await engine;
    expect(c.facts).toMatchObject({ createdAfterCommit: expect.any(Number) });
  }, 120_000);

  test("runs the cases against the API, marks its runs as drill runs, links the receipt", async () => {
    const cases = selectCases(["queued_call_starts_after_parent_revocation", "unauthorized_interrupt", "missing_control_row"]);
    const report = await runDrill(
      {
        url: w.server.url,
        operatorKey: w.a.keys.operator,
        agentKey: w.a.keys.agent,
        provider: "deploy-sim",
        receiptTimeoutMs: 30_000,
        log: () => {},
      },
      cases,
    );
    expect(report.cases.map((c) => [c.name, c.status, c.observed])).toEqual([
      ["queued_call_starts_after_parent_revocation", "pass", "deny_parent_revoked"],
      ["unauthorized_interrupt", "pass", "refused"],
      ["missing_control_row", "pass", "deny_missing_state"],
    ]);
    expect(report.summary.ok).toBe(true);

    const tag = report.environment.tag as string;
    const runs = await prisma().run.findMany({ where: { teamId: w.a.teamId, taskId: { startsWith: tag } } });
    // preflight + 2 (queued call) + 1 (unauthorized) + 1 (missing row): every one marked, children included.
    expect(runs.length).toBe(5);
    expect(runs.every((r) => r.isDrill)).toBe(true);
    expect(runs.some((r) => r.parentRunId !== null)).toBe(true);

    const queued = report.cases[0]!;
    const barrier = await prisma().barrier.findFirstOrThrow({ where: { teamId: w.a.teamId, run: { taskId: { startsWith: tag } } } });
    expect(queued.evidence).toContainEqual({ label: "stop receipt (console)", url: `${w.server.url}/receipts/${barrier.id}` });
    expect(queued.evidence).toContainEqual({ label: "barrier (API)", url: `${w.server.url}/api/v1/barriers/${barrier.id}` });
  }, 120_000);

  test(
    "the CLI: a failing case exits 1, bad flags exit 2, a passing drill exits 0 with a JSON report; setup sets a team aside",
    async () => {
      const base = ["drill", "--url", w.server.url, "--agent-key", w.a.keys.agent, "--json"];
      const slug = `drills-${Date.now().toString(36)}`;
      const results = await runCliAll([
        // A viewer's key cannot kill: the case errors and the drill fails.
        [...base, "--key", w.a.keys.viewerOperator, "--only", "queued_call_starts_after_parent_revocation"],
        ["drill", "--url", w.server.url, "--key", w.a.keys.operator, "--only", "no_such_case"],
        [...base, "--key", w.a.keys.operator, "--only", "missing_control_row"],
        ["drill", "setup", "--team", slug],
      ]);
      const [viewer, bad, ok, setup] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0], (typeof results)[0]];
      expect(viewer.code).toBe(1);
      const failed = JSON.parse(viewer.stdout);
      expect(failed.summary).toMatchObject({ ok: false, errors: 1 });
      expect(failed.cases[0].note).toMatch(/run\.kill|forbidden|not allowed/i);

      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--only: unknown case(s) no_such_case");

      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout).cases[0]).toMatchObject({ name: "missing_control_row", status: "pass" });

      expect(setup.code).toBe(0);
      const keys = Object.fromEntries(
        setup.stdout
          .trim()
          .split("\n")
          .map((l) => l.split("=", 2) as [string, string]),
      );
      const team = await prisma().team.findUniqueOrThrow({ where: { slug } });
      expect(team.isDrill).toBe(true);
      const operator = new QuiesceClient({ url: w.server.url, apiKey: keys.QUIESCE_OPERATOR_KEY });
      const agent = new QuiesceClient({ url: w.server.url, apiKey: keys.QUIESCE_AGENT_KEY });
      const run = await agent.createRun({ taskId: "setup-check", drill: true });
      await expect(operator.getRun(run.runId)).resolves.toMatchObject({ isDrill: true });
      await expect(operator.pause(run.runId, "the drill operator may act")).resolves.toMatchObject({ lifecycle: "paused" });
    },
    CLI_TEST_TIMEOUT,
  );
});
