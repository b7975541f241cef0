// `quiesce stop` / `quiesce stops show|resume` as real processes over real HTTP (test/support/api-server)
// against the real database: dry run changes nothing, a pause scope holds matching runs until resumed,
// a viewer is refused (exit 2), bad filters are usage errors (exit 2) before anything is sent.
import { afterAll, beforeAll, expect, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCli, runCliAll, type CliResult } from "./run-cli";
import { startApiServer, type ApiServer } from "../support/api-server";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { prisma } from "../../lib/platform/db/prisma";
import { closeDbClients } from "../../lib/start/database";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { makeTeam, makeUser } from "../support/fixtures";

const SYSTEM = { type: "system", name: "test" } as const;
let api: ApiServer;
let teamId = "";
const keys = { agent: "", operator: "", viewer: "" };
beforeAll(async () => {
  api = await startApiServer();
  teamId = (await makeTeam("cli-stop")).teamId;
  const op = await makeUser(teamId, "operator");
  const viewer = await makeUser(teamId, "viewer");
  keys.agent = (await createApiKey(SYSTEM, { teamId, kind: "agent", name: "agent" })).secret;
  keys.operator = (await createApiKey(SYSTEM, { teamId, kind: "operator", name: "op", userId: op.userId })).secret;
  keys.viewer = (await createApiKey(SYSTEM, { teamId, kind: "operator", name: "viewer", userId: viewer.userId })).secret;
});
afterAll(async () => {
  await api?.close();
  await closeDbClients();
});

const env = () => ({ QUIESCE_URL: api.url, QUIESCE_TIMEOUT_MS: "120000" });

test(
  "stop --dry-run counts, stop holds the matching runs, stops show / resume; refusals exit 2 and change nothing",
  async () => {
    const agent = new QuiesceClient({ url: api.url, apiKey: keys.agent });
    await agent.createRun({ taskId: "cli-fleet-1", harness: "codex" });
    await agent.createRun({ taskId: "cli-fleet-2", harness: "codex" });
    await agent.createRun({ taskId: "elsewhere", harness: "codex" });
    const base = [
      "stop",
      "--action",
      "pause",
      "--filter",
      "task=cli-fleet-",
      "--filter",
      "harness=codex",
      "--reason",
      "cli drill",
      "--key",
      keys.operator,
    ];

    const [dry, viewer, bad, none] = (await runCliAll(
      [
        [...base, "--dry-run"],
        ["stop", "--action", "pause", "--filter", "task=cli-fleet-", "--reason", "x", "--key", keys.viewer],
        ["stop", "--action", "pause", "--filter", "colour=red", "--reason", "x", "--key", keys.operator],
        ["stop", "--action", "pause", "--reason", "x", "--key", keys.operator],
      ],
      env(),
    )) as [CliResult, CliResult, CliResult, CliResult];
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("would cover 2 run(s)");
    expect(viewer.code).toBe(2);
    expect(viewer.stderr).toContain("403");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown key "colour"');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--all");
    expect(await prisma().stopScope.count({ where: { teamId } })).toBe(0);

    const made = await runCli([...base, "--json"], env());
    expect(made.code, made.stderr).toBe(0);
    const stop = JSON.parse(made.stdout) as { stopId: string; matched: number };
    expect(stop.matched).toBe(2);
    const scope = await prisma().stopScope.findUniqueOrThrow({ where: { id: stop.stopId } });
    expect(scope).toMatchObject({
      teamId,
      action: "pause",
      fTaskPrefix: "cli-fleet-",
      fHarness: ["codex"],
      reason: "cli drill",
      liftedAt: null,
    });

    const show = await runCli(["stops", "show", stop.stopId, "--key", keys.operator], env());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`fleet stop ${stop.stopId}: pause, 2 run(s) matched`);
    expect(show.stdout).toContain("dispatch stopped");
    const resumed = await runCli(["stops", "resume", stop.stopId, "--reason", "clear", "--key", keys.operator], env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("dispatch resumed");
    expect((await prisma().stopScope.findUniqueOrThrow({ where: { id: stop.stopId } })).liftedAt).not.toBeNull();
  },
  CLI_TEST_TIMEOUT,
);
