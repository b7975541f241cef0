// The environment in the evidence (docs/evidence.md#the-environment), through the real route handlers, the
// real engine and PostgreSQL: the holder marks its run supervised (a same-team non-holder gets 403 and
// changes nothing; a killed run refuses the mark); a supervised run's receipt waits for its supervisor's
// evidence and lists its processes; one that never reports is unknown, with an owner, until the evidence
// arrives and the receipt is reissued; an unsupervised run's receipt claims nothing about its processes.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { loadEvidenceFactsTx } from "../../lib/modules/stop/internal/evidence";
import { StopReceiptSchema } from "../../lib/schemas/barriers";
import { UNSUPERVISED_SENTENCE, type EnvironmentEvidence } from "../../lib/control/evidence/environment";
import { startApiServer, type ApiServer } from "../support/api-server";
import { referenceEvidenceFactsTx } from "../support/evidence-reference";
import { makeRun } from "../support/fixtures";
import { makeTeam, receiptsOf, waitFor, type TeamFixture } from "./fixtures";

let api: ApiServer;
let team: TeamFixture;
let keys: { operator: string; viewer: string; holder: string; stranger: string; holderKeyId: string };
const system = { type: "system", name: "test" } as const;
const ac = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  api = await startApiServer();
  team = await makeTeam();
  await setTeamStopSettings(system, team.teamId, { quietPeriodMs: 200 });
  const holder = await createApiKey(system, { teamId: team.teamId, kind: "agent", name: "holder" });
  keys = {
    operator: (await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "op", userId: team.users.operator.id })).secret,
    viewer: (await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "viewer", userId: team.users.viewer.id })).secret,
    holder: holder.secret,
    holderKeyId: holder.id,
    stranger: (await createApiKey(system, { teamId: team.teamId, kind: "agent", name: "stranger" })).secret,
  };
  engine = runBarrierWorker({ teamId: team.teamId, signal: ac.signal, pollMs: 200, claimMs: 3000, localSettleMs: 300, listen: true });
}, 120_000);

afterAll(async () => {
  ac.abort();
  await engine;
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
}

const evidence = (over: Partial<EnvironmentEvidence> = {}): EnvironmentEvidence => {
  const t = new Date().toISOString();
  return {
    kind: "environment",
    mechanism: "cgroup2",
    weakest: false,
    container: "/sys/fs/cgroup/quiesce/test",
    graceMs: 0,
    stopStartedAt: t,
    emptyAt: t,
    processes: [
      { pid: 4242, cmdline: "claude -p hi", firstSeenAt: t, endedAt: t, ended: "after_sigterm" },
      { pid: 4243, cmdline: "sleep 600", firstSeenAt: t, endedAt: t, ended: "after_sigkill" },
    ],
    survivors: [],
    reattached: false,
    ...over,
  };
};

const receipt = (barrierId: string, version: number) =>
  waitFor(
    `receipt v${version} of ${barrierId}`,
    async () => (await receiptsOf(barrierId)).find((r) => r.version === version) ?? null,
    30_000,
    100,
  );

async function sameFacts(barrierId: string) {
  const now = new Date();
  const [many, ref] = await prisma().$transaction(
    async (tx) => [await loadEvidenceFactsTx(tx, barrierId, now), await referenceEvidenceFactsTx(tx, barrierId, now)] as const,
    { isolationLevel: "RepeatableRead" },
  );
  expect(many).toEqual(ref);
  return many;
}

describe("the environment in the evidence", () => {
  test("only the holder marks a run supervised: a same-team non-holder gets 403 and nothing changes; a killed run refuses the mark", async () => {
    const run = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    const body = { mechanism: "cgroup2", graceMs: 0 };
    const denied = await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.stranger, body);
    expect(denied.status).toBe(403);
    expect(await prisma().runEnvironment.findUnique({ where: { runId: run.runId } })).toBeNull();
    expect(await prisma().auditEvent.count({ where: { teamId: team.teamId, action: "run.supervised", target: run.runId } })).toBe(0);

    // A stranger presenting the run's lease is a holder (docs/security/authorization.md#holders).
    const ok = await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { ...body, liveProcesses: 3 });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ runId: run.runId, supervised: true, mechanism: "cgroup2", liveProcesses: 3, frozen: false });
    const byLease = await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.stranger, {
      ...body,
      leaseId: run.leaseId,
      frozen: true,
    });
    expect(byLease.status).toBe(200);
    expect(byLease.json.frozen).toBe(true);
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { ...body, mechanism: "pgroup" })).status).toBe(409);
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { ...body, graceMs: -1 })).status).toBe(400);

    // Evidence from a non-holder is refused too, and records nothing.
    const { json: kill } = await call("POST", `/api/v1/runs/${run.runId}/kill`, keys.operator, { reason: "env: holder test" });
    const before = await prisma().runEnvironment.findUniqueOrThrow({ where: { runId: run.runId } });
    const report = { meaning: "process_terminated", evidence: { environment: evidence() } };
    expect((await call("POST", `/api/v1/runs/${run.runId}/observed`, keys.stranger, report)).status).toBe(403);
    expect(await prisma().runEnvironment.findUniqueOrThrow({ where: { runId: run.runId } })).toEqual(before);
    expect((await call("POST", `/api/v1/runs/${run.runId}/observed`, keys.holder, report)).status).toBe(200);
    const r = await receipt(kill.barrierId, 1);
    expect(r.decision).toBe("stopped_and_quiet");

    const late = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    await call("POST", `/api/v1/runs/${late.runId}/kill`, keys.operator, { reason: "env: killed first" });
    expect((await call("POST", `/api/v1/runs/${late.runId}/environment`, keys.holder, body)).status).toBe(409);
    expect(await prisma().runEnvironment.findUnique({ where: { runId: late.runId } })).toBeNull();
  }, 60_000);

  test("a supervised run's receipt lists every process and how it ended; the unsupervised child's claims nothing", async () => {
    const root = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    const child = await makeRun(team.teamId, {}, root);
    expect((await call("POST", `/api/v1/runs/${root.runId}/environment`, keys.holder, { mechanism: "cgroup2", graceMs: 0 })).status).toBe(
      200,
    );
    const { json: kill } = await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.operator, { reason: "env: evidence" });
    expect(
      (
        await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.holder, {
          meaning: "process_terminated",
          evidence: { environment: evidence() },
        })
      ).status,
    ).toBe(200);
    const r = await receipt(kill.barrierId, 1);
    const body = StopReceiptSchema.parse(r.body);
    expect(body.decision).toBe("stopped_and_quiet");
    expect(body.environment).toEqual([
      expect.objectContaining({
        run_id: root.runId,
        supervised: true,
        status: "terminated",
        mechanism: "cgroup2",
        could_not_kill: [],
        processes: [
          expect.objectContaining({ pid: 4242, command: "claude -p hi", ended: "after_sigterm" }),
          expect.objectContaining({ pid: 4243, command: "sleep 600", ended: "after_sigkill" }),
        ],
      }),
      { run_id: child.runId, supervised: false, statement: UNSUPERVISED_SENTENCE },
    ]);
    expect(body.summary.join("\n")).toMatch(/environment terminated: 2 processes ended, container \(cgroup2\) empty at/);
    expect(body.summary.join("\n")).toContain("Environment not observed for 1 run without a supervisor");
    await sameFacts(kill.barrierId);
    const view = await call("GET", `/api/v1/barriers/${kill.barrierId}`, keys.operator);
    expect(view.json.ladder.environment_terminated.status).toBe("done");
  }, 60_000);

  test("a supervisor that never reports: unknown with an owner, then its late evidence reissues the receipt", async () => {
    const run = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { mechanism: "pidns", graceMs: 0 });
    const { json: kill } = await call("POST", `/api/v1/runs/${run.runId}/kill`, keys.operator, { reason: "env: silent supervisor" });
    const v1 = await receipt(kill.barrierId, 1);
    // The quiet period waited for the supervisor (its grace plus the margin), not only the team's 200 ms.
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: kill.barrierId } });
    expect(b.quietPeriodSeconds).toBeGreaterThanOrEqual(3);
    const body1 = StopReceiptSchema.parse(v1.body);
    expect(body1.decision).toBe("stop_incomplete");
    expect(body1.environment).toEqual([
      expect.objectContaining({ run_id: run.runId, status: "unknown", processes: [], owner: team.users.operator.email }),
    ]);
    expect(body1.summary.join("\n")).toContain(
      `${run.runId}: environment unknown: its supervisor did not report within the quiet period; owned by ${team.users.operator.email}.`,
    );
    expect(body1.summary.at(-1)).toMatch(/^Not yet quiet: 1 environment unknown/);
    const row = await prisma().runEnvironment.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(row.unknownSince).not.toBeNull();
    expect(row.ownerUserId).toBe(team.users.operator.id);
    await sameFacts(kill.barrierId);

    // The reattached supervisor's evidence arrives: the next version says what it proves.
    const late = evidence({ mechanism: "pidns", reattached: true });
    expect(
      (
        await call("POST", `/api/v1/runs/${run.runId}/observed`, keys.holder, {
          meaning: "process_terminated",
          evidence: { environment: late },
        })
      ).status,
    ).toBe(200);
    const v2 = StopReceiptSchema.parse((await receipt(kill.barrierId, 2)).body);
    expect(v2.decision).toBe("stopped_and_quiet");
    expect(v2.previous_digest).toBe(v1.digest);
    expect(v2.environment).toEqual([
      expect.objectContaining({ status: "terminated", reattached: true, unknown_since: row.unknownSince!.toISOString() }),
    ]);
  }, 60_000);

  test("survivors are never 'terminated': the receipt names what could not be killed", async () => {
    const run = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { mechanism: "pgroup", graceMs: 0 });
    const { json: kill } = await call("POST", `/api/v1/runs/${run.runId}/kill`, keys.operator, { reason: "env: survivors" });
    const t = new Date().toISOString();
    const bad = evidence({
      mechanism: "pgroup",
      weakest: true,
      emptyAt: null,
      survivors: [4243],
      processes: [{ pid: 4243, cmdline: "sleep 600", firstSeenAt: t, endedAt: null, ended: "not_ended" }],
    });
    await call("POST", `/api/v1/runs/${run.runId}/observed`, keys.holder, { meaning: "unknown", evidence: { environment: bad } });
    const body = StopReceiptSchema.parse((await receipt(kill.barrierId, 1)).body);
    expect(body.decision).toBe("stop_incomplete");
    expect(body.environment).toEqual([expect.objectContaining({ status: "unknown", weakest: true, could_not_kill: [4243] })]);
    expect(body.summary.join("\n")).not.toMatch(/environment terminated/);
  }, 60_000);

  test("a person closes an unknown environment: only its owner or a manager; the receipt names them and says it was a person's check", async () => {
    const run = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    await call("POST", `/api/v1/runs/${run.runId}/environment`, keys.holder, { mechanism: "cgroup2", graceMs: 0 });
    const { json: kill } = await call("POST", `/api/v1/runs/${run.runId}/kill`, keys.operator, { reason: "env: a person checks" });
    const v1 = StopReceiptSchema.parse((await receipt(kill.barrierId, 1)).body);
    expect(v1.environment).toEqual([expect.objectContaining({ status: "unknown", owner: team.users.operator.email })]);
    const body = { resolution: "verified_empty", evidence: "ps -ef on the build host shows nothing of the run" };
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment/resolve`, keys.holder, body)).status).toBe(403);
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment/resolve`, keys.viewer, body)).status).toBe(403);
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment/resolve`, keys.operator, { ...body, evidence: " " })).status).toBe(
      400,
    );
    expect((await prisma().runEnvironment.findUniqueOrThrow({ where: { runId: run.runId } })).resolvedAt).toBeNull();
    const ok = await call("POST", `/api/v1/runs/${run.runId}/environment/resolve`, keys.operator, body);
    expect(ok.status).toBe(200);
    expect(ok.json.receiptVersions).toEqual([{ barrierId: kill.barrierId, version: 2 }]);
    expect((await call("POST", `/api/v1/runs/${run.runId}/environment/resolve`, keys.operator, body)).status).toBe(409);
    const v2 = StopReceiptSchema.parse((await receipt(kill.barrierId, 2)).body);
    expect(v2.decision).toBe("stopped_and_quiet");
    expect(v2.environment).toEqual([
      expect.objectContaining({
        status: "verified_by_person",
        resolved_by: team.users.operator.email,
        processes: [],
        resolution_evidence: body.evidence,
      }),
    ]);
    expect(v2.summary.join("\n")).toContain(`environment verified empty by ${team.users.operator.email}`);
    expect(v2.summary.join("\n")).not.toMatch(/environment terminated/);
    await sameFacts(kill.barrierId);
    // A run without a supervisor has nothing to resolve.
    const plain = await makeRun(team.teamId, { holderKeyId: keys.holderKeyId });
    expect((await call("POST", `/api/v1/runs/${plain.runId}/environment/resolve`, keys.operator, body)).status).toBe(409);
  }, 60_000);
});
