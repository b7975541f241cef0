// The operator commands (pause, resume, kill, breaker, runs list/show) as real processes over real
// HTTP (test/support/api-server serves the real route handlers) against the real database. They are
// authorized exactly like the API: machine keys and viewers are refused, another team's run is 404,
// and a refused or malformed command exits 2 and changes nothing.
import pg from "pg";
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCli, runCliAll, type CliResult } from "./run-cli";
import { startApiServer, type ApiServer } from "../support/api-server";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { ensureMembership, ensureTeam, ensureUser } from "../../lib/modules/members/admin-directory";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { closeDbClients } from "../../lib/start/database";
import type { Role } from "../../lib/control/types";

const SYSTEM = { type: "system", name: "test" } as const;
const tag = Math.random().toString(36).slice(2, 8);
const db = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
let api: ApiServer;
const keys: Record<"agent" | "operator" | "viewer" | "otherOperator", string> = { agent: "", operator: "", viewer: "", otherOperator: "" };

async function team(slug: string, members: [string, Role][]): Promise<{ id: string; users: Record<string, string> }> {
  const t = (await ensureTeam(SYSTEM, { slug, name: slug })).team;
  const users: Record<string, string> = {};
  for (const [email, role] of members) {
    const u = (await ensureUser(SYSTEM, { email, name: email, passwordHash: null })).user;
    await ensureMembership(SYSTEM, { teamId: t.id, userId: u.id, role });
    users[email] = u.id;
  }
  return { id: t.id, users };
}

beforeAll(async () => {
  api = await startApiServer();
  const a = await team(`cli-op-${tag}`, [
    [`op-${tag}@a.test`, "operator"],
    [`viewer-${tag}@a.test`, "viewer"],
  ]);
  const b = await team(`cli-op-other-${tag}`, [[`op-${tag}@b.test`, "operator"]]);
  keys.agent = (await createApiKey(SYSTEM, { teamId: a.id, kind: "agent", name: "agent" })).secret;
  keys.operator = (await createApiKey(SYSTEM, { teamId: a.id, kind: "operator", name: "op", userId: a.users[`op-${tag}@a.test`] })).secret;
  keys.viewer = (
    await createApiKey(SYSTEM, { teamId: a.id, kind: "operator", name: "viewer", userId: a.users[`viewer-${tag}@a.test`] })
  ).secret;
  keys.otherOperator = (
    await createApiKey(SYSTEM, { teamId: b.id, kind: "operator", name: "op", userId: b.users[`op-${tag}@b.test`] })
  ).secret;
});
afterAll(async () => {
  await api?.close();
  await db.end();
  await closeDbClients();
});

// Generous client timeout: the first call to each route loads its module, slowly on a busy machine.
const env = () => ({ QUIESCE_URL: api.url, QUIESCE_TIMEOUT_MS: "120000" });
const runState = async (runId: string) =>
  (await db.query("SELECT lifecycle::text, breaker::text, epoch, lifecycle_reason FROM runs WHERE id = $1", [runId])).rows[0];
const newRun = async (taskId: string) =>
  (await new QuiesceClient({ url: api.url, apiKey: keys.agent }).createRun({ taskId, title: `cli ${taskId}` })).runId;

test(
  "pause, resume, breaker trip/reset change exactly what they name, with the reason recorded",
  async () => {
    const runId = await newRun("cli-lifecycle");
    const pause = await runCli(["pause", runId, "--reason", "looks stuck", "--key", keys.operator], env());
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toContain("lifecycle paused");
    expect(await runState(runId)).toMatchObject({ lifecycle: "paused", breaker: "closed", lifecycle_reason: "looks stuck" });

    const trip = await runCli(["breaker", "trip", runId, "--reason", "tool errors", "--json", "--key", keys.operator], env());
    expect(trip.code, trip.stderr).toBe(0);
    expect(JSON.parse(trip.stdout)).toMatchObject({ runId, breaker: "open" });
    expect(await runState(runId)).toMatchObject({ lifecycle: "paused", breaker: "open" });

    const [resume, reset] = [
      await runCli(["resume", runId, "--reason", "checked", "--key", keys.operator], env()),
      await runCli(["breaker", "reset", runId, "--reason", "fixed", "--key", keys.operator], env()),
    ];
    expect(resume.code, resume.stderr).toBe(0);
    expect(reset.code, reset.stderr).toBe(0);
    expect(await runState(runId)).toMatchObject({ lifecycle: "normal", breaker: "closed" });
  },
  CLI_TEST_TIMEOUT,
);

test(
  "runs list and runs show read over the API with the key's team",
  async () => {
    const runId = await newRun("cli-read");
    const [list, show, otherShow] = (await runCliAll(
      [
        ["runs", "list", "--json", "--q", "cli-read", "--key", keys.agent],
        ["runs", "show", runId, "--key", keys.agent],
        ["runs", "show", runId, "--key", keys.otherOperator],
      ],
      env(),
    )) as [CliResult, CliResult, CliResult];
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toContain(runId);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(runId);
    expect(show.stdout).toMatch(/lifecycle\s+normal/);
    expect(otherShow.code).toBe(2); // another team's run answers exactly like a missing one
    expect(otherShow.stderr).toMatch(/not_found/);
  },
  CLI_TEST_TIMEOUT,
);

test(
  "refused or malformed control commands exit 2 and change nothing",
  async () => {
    const runId = await newRun("cli-refused");
    const before = await runState(runId);
    const cases: [string[], RegExp][] = [
      [["pause", runId, "--reason", "x", "--key", keys.agent], /forbidden/], // machine key: never a control write
      [["kill", runId, "--reason", "x", "--key", keys.viewer], /forbidden/], // viewer's operator key
      [["pause", runId, "--reason", "x", "--key", keys.otherOperator], /not_found/], // another team
      [["breaker", "trip", runId, "--reason", "x", "--key", "qk_operator_not-a-real-key"], /unauthenticated/],
      [["pause", runId, "--key", keys.operator], /--reason is required/],
      [["kill", "--reason", "x", "--key", keys.operator], /a run id is required/],
      [["breaker", "open", runId, "--reason", "x", "--key", keys.operator], /unknown breaker action "open"/],
      [["pause", runId, "--reason", "x"], /no API key/],
    ];
    const results = await runCliAll(
      cases.map(([a]) => a),
      { ...env(), QUIESCE_API_KEY: "" },
    );
    results.forEach((r, i) => {
      expect(r.code, `${cases[i]![0].join(" ")}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
    });
    expect(await runState(runId)).toEqual(before);
    const barriers = await db.query("SELECT count(*)::int AS n FROM barriers WHERE run_id = $1", [runId]);
    expect(barriers.rows[0].n).toBe(0);
  },
  CLI_TEST_TIMEOUT,
);

test(
  "kill with an operator key starts the barrier; an unreachable control plane exits 1",
  async () => {
    const runId = await newRun("cli-kill");
    const kill = await runCli(["kill", runId, "--reason", "runaway deploys", "--json", "--key", keys.operator], env());
    expect(kill.code, kill.stderr).toBe(0);
    const { barrierId } = JSON.parse(kill.stdout) as { barrierId: string };
    expect(barrierId).toMatch(/^stop_/);
    expect(await runState(runId)).toMatchObject({ lifecycle: "killed" });
    const row = await db.query("SELECT run_id FROM barriers WHERE id = $1", [barrierId]);
    expect(row.rows[0]?.run_id).toBe(runId);

    const down = await runCli(["pause", runId, "--reason", "x", "--key", keys.operator, "--url", "http://127.0.0.1:9"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/unreachable/);
  },
  CLI_TEST_TIMEOUT,
);
