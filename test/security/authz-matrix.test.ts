// The authorization matrix, generated — not hand-listed. Every route module under app/api/v1 (what
// it exports) is matched against the OpenAPI document, and each operation must have an entry below
// naming the permission it needs and a sample request: a new route without an entry fails this test.
// Then every operation is called over real HTTP by every principal — none, malformed, revoked,
// expired, each key kind, each role (operator keys carry a member's role), a disabled user's key,
// another team's keys — against its own team's resource and the other team's. The expected status
// comes from lib/control/authz isAllowed; every refusal must leave both teams exactly as they were
// (row counts, control columns and the audit head). Server actions: every exported action of every
// app/**/actions.ts goes through runAction with a declared permission.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { ACTIONS, isAllowed, type Action, type Caller } from "../../lib/control/authz";
import { createApiKey, revokeApiKey } from "../../lib/modules/keys/api-keys";
import { setUserDisabled } from "../../lib/modules/members/members";
import { buildOpenApiDocument } from "../../lib/schemas/openapi";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeWorld, type TestTeam, type World } from "../api/fixtures";
import { createPolicyVersion, enablePolicy } from "../../lib/modules/policy";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SYSTEM: Principal = { type: "system", name: "matrix" };

// ── What each operation needs. The ONLY hand-kept part; keyed by the OpenAPI operationId. ────────────
type Target = {
  runId: string;
  leaseId: string;
  epoch: number;
  operationId: string;
  runningOpId: string;
  barrierId: string;
  stopId: string;
  /** A recovery item of the killed run (a completed effect), owned by the admin who killed it. */
  recoveryId: string;
  /** A member of the target's team to assign recovery items to: the admin, who owns them already, so no other role becomes an owner. */
  memberUserId: string;
  /** A pending approval of the target run (the team's policy requires one for tool "needs-yes"). */
  approvalId: string;
  /** The team's enabled policy version. */
  policyVersion: number;
};
interface Entry {
  /** null: public. */
  action: Action | null;
  /** What a caller allowed to act gets for the OTHER team's resource: 404, or the gate's deny. */
  crossTeam?: 404 | "deny" | "none";
  body?: (t: Target, uniq: string) => unknown;
  query?: string;
  /** Substitutes path parameters from the target. */
  stream?: boolean;
  /** Holder-only (docs/security/authorization.md#holders): the principals that hold the target; any other gets 403. */
  holders?: string[];
}
// The target run is registered by "agent" (its holder); its queued operation by "worker" (which holds that).
const RUN_HOLDERS = ["agent"];
const QUEUED_OP_HOLDERS = ["agent", "worker"];
const RECOVERY_OWNERS = ["manager", "admin"];
// Who may answer the target's approval: its rule's role (operator) and above; viewers only when named.
const APPROVERS = ["operator", "manager", "admin"];
const ENTRIES: Record<string, Entry> = {
  openapi: { action: null, crossTeam: "none" },
  createRun: { action: "run.register", crossTeam: 404, body: (t) => ({ taskId: "matrix", parentRunId: t.runId }), holders: RUN_HOLDERS },
  listRuns: { action: "run.read", crossTeam: "none" },
  getRun: { action: "run.read", crossTeam: 404 },
  getRunControl: { action: "run.read", crossTeam: 404 },
  runEvents: { action: "run.read", crossTeam: 404, stream: true },
  pauseRun: { action: "run.pause", crossTeam: 404, body: () => ({ reason: "matrix" }) },
  resumeRun: { action: "run.resume", crossTeam: 404, body: () => ({ reason: "matrix" }) },
  killRun: { action: "run.kill", crossTeam: 404, body: () => ({ reason: "matrix" }) },
  setBreaker: { action: "breaker.trip", crossTeam: 404, body: () => ({ action: "trip", reason: "matrix" }) },
  reportObserved: { action: "operation.report", crossTeam: 404, body: () => ({ meaning: "signal_accepted" }), holders: RUN_HOLDERS },
  registerOperation: {
    action: "operation.register",
    crossTeam: 404,
    body: (t, u) => ({ runId: t.runId, leaseId: t.leaseId, epoch: t.epoch, operationId: `m-${u}`, kind: "queued", tool: "t" }),
  },
  admitOperation: { action: "gate.ask", crossTeam: 404, body: () => ({}), holders: QUEUED_OP_HOLDERS },
  heartbeatOperation: { action: "gate.ask", crossTeam: 404, body: () => ({}), holders: QUEUED_OP_HOLDERS },
  completeOperation: { action: "operation.report", crossTeam: 404, body: () => ({ outcome: "failed" }), holders: RUN_HOLDERS },
  gate: {
    action: "gate.ask",
    crossTeam: "deny",
    body: (t, u) => ({ runId: t.runId, leaseId: t.leaseId, epoch: t.epoch, operationId: `g-${u}`, tool: "t" }),
  },
  getBarrier: { action: "run.read", crossTeam: 404 },
  getReceipt: { action: "run.read", crossTeam: 404 },
  finishRun: { action: "operation.report", crossTeam: 404, body: () => ({}), holders: RUN_HOLDERS },
  createStop: {
    action: "fleet.stop",
    crossTeam: "none",
    body: () => ({ action: "pause", filter: { taskPrefix: "matrix-nothing-" }, reason: "matrix", dryRun: true }),
  },
  getStop: { action: "run.read", crossTeam: 404 },
  resumeStop: { action: "fleet.stop", crossTeam: 404, body: () => ({ reason: "matrix" }) },
  listRecoveries: { action: "run.read", crossTeam: "none" },
  // The target is alive: a caller allowed to restart gets 409 (only a killed root on settled ground restarts).
  restartRun: { action: "run.resume", crossTeam: 404, body: () => ({ reason: "matrix" }) },
  getLedger: { action: "run.read", crossTeam: 404 },
  // Where the running call's work is held: only its holder may say (the running call is the agent's).
  providerOperation: {
    action: "operation.report",
    crossTeam: 404,
    body: () => ({ providerName: "matrix-mcp", providerJobId: "task-1" }),
    holders: RUN_HOLDERS,
  },
  // The supervisor's report marks the run supervised: only the run's holder.
  reportEnvironment: {
    action: "operation.report",
    crossTeam: 404,
    body: () => ({ mechanism: "pgroup", graceMs: 0 }),
    holders: RUN_HOLDERS,
  },
  // A person's check of an unknown environment: its owner (nobody yet here) or a manager/admin.
  resolveEnvironment: {
    action: "reconciliation.resolve",
    crossTeam: 404,
    body: () => ({ resolution: "verified_empty", evidence: "matrix" }),
    holders: RECOVERY_OWNERS,
  },
  assignRecovery: { action: "reconciliation.assign", crossTeam: 404, body: (t) => ({ assigneeUserId: t.memberUserId }) },
  // The item's owner (the admin who killed the run) or a manager/admin: a same-team viewer or operator is refused.
  startRecovery: { action: "reconciliation.resolve", crossTeam: 404, body: () => ({}), holders: RECOVERY_OWNERS },
  recordRecovery: {
    action: "reconciliation.resolve",
    crossTeam: 404,
    body: () => ({ state: "in_progress", note: "matrix", evidence: "matrix" }),
    holders: RECOVERY_OWNERS,
  },
  // Policy versions are numbered per team: "version 1" of the other team is the caller's own version 1.
  getPolicy: { action: "run.read", crossTeam: "none" },
  createPolicyVersion: { action: "policy.write", crossTeam: "none", body: () => ({ rules: [] }) },
  getPolicyVersion: { action: "run.read", crossTeam: "none" },
  dryRunPolicy: { action: "policy.write", crossTeam: "none", body: () => ({ days: 1 }) },
  enablePolicy: { action: "policy.write", crossTeam: "none", body: (t) => ({ version: t.policyVersion, reason: "matrix" }) },
  listBudgets: { action: "run.read", crossTeam: "none" },
  listApprovals: { action: "run.read", crossTeam: "none" },
  getApproval: { action: "run.read", crossTeam: 404 },
  decideApproval: { action: "approval.decide", crossTeam: 404, body: () => ({ decision: "deny", note: "matrix" }), holders: APPROVERS },
  // Providers are the caller's own team's: there is no other team's provider to name. A public address
  // literal, so the save judges it without a lookup (nothing connects to it).
  listProviders: { action: "provider.read", crossTeam: "none" },
  createProvider: {
    action: "provider.write",
    crossTeam: "none",
    body: (_t, u) => ({ name: `m-${u}`, kind: "a2a", url: "http://1.1.1.1/a2a", jobUrl: "https://deploy.example/jobs/{providerJobId}" }),
  },
};

// ── Routes from the files ──────────────────────────────────────────────────────────────────────────
function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const full = path.join(dir, n);
    return statSync(full).isDirectory() ? routeFiles(full) : n === "route.ts" ? [full] : [];
  });
}
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
async function discoveredRoutes(): Promise<{ key: string; method: string; path: string }[]> {
  const out: { key: string; method: string; path: string }[] = [];
  for (const file of routeFiles(path.join(ROOT, "app/api/v1"))) {
    const rel = path
      .relative(path.join(ROOT, "app"), path.dirname(file))
      .split(path.sep)
      .map((s) => s.replace(/^\[(.+)\]$/, "{$1}"));
    const mod = (await import(file)) as Record<string, unknown>;
    for (const m of METHODS)
      if (typeof mod[m] === "function") out.push({ key: `${m} /${rel.join("/")}`, method: m, path: `/${rel.join("/")}` });
  }
  return out;
}

// ── The world ────────────────────────────────────────────────────────────────────────────────────
let w: World;
interface Who {
  name: string;
  secret: string | null;
  header?: string;
  team: "a" | "b" | null;
  caller: Caller | null;
}
let principals: Who[] = [];
const targets: Record<"a" | "b", Target> = {} as never;

async function makeTarget(team: TestTeam): Promise<Target> {
  const agent = w.client(team.keys.agent);
  const run = await agent.createRun({ taskId: "matrix-target" });
  await w.client(team.keys.worker).registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: `q-${run.runId}`,
    kind: "queued",
    tool: "t",
  });
  await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `r-${run.runId}`, tool: "t" });
  const doomed = await agent.createRun({ taskId: "matrix-barrier" });
  const { barrierId } = await w.client(team.keys.admin).kill(doomed.runId, "matrix barrier");
  // An effect the barrier found completed opens a recovery item at commit.
  const opRow = newId("op");
  await prisma().operation.create({
    data: {
      id: opRow,
      teamId: team.teamId,
      operationId: `done-${doomed.runId}`,
      runId: doomed.runId,
      epochStamp: 1,
      kind: "call",
      tool: "t",
      state: "succeeded",
    },
  });
  await prisma().settlement.create({
    data: {
      id: newId("set"),
      barrierId,
      operationId: opRow,
      stateAtBarrier: "running",
      settledState: "completed_and_verified",
      settledAt: new Date(),
    },
  });
  const recovery = await prisma().recoveryItem.findUniqueOrThrow({ where: { operationId: opRow } });
  const stop = await w
    .client(team.keys.admin)
    .createStop({ action: "pause", filter: { taskPrefix: "matrix-nothing-" }, reason: "matrix stop" });
  // A policy that asks a person before tool "needs-yes", and one call of the target run waiting for that yes.
  const admin = await adminOf(team);
  const policy = await createPolicyVersion(admin, {
    rules: [{ name: "needs-yes", tool: "needs-yes", effect: "require_approval" }],
  });
  await enablePolicy(admin, { version: policy.version, reason: "matrix" });
  const held = await agent.gate({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: `a-${run.runId}`,
    tool: "needs-yes",
  });
  return {
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: `q-${run.runId}`,
    runningOpId: `r-${run.runId}`,
    barrierId,
    stopId: (stop as { stopId: string }).stopId,
    recoveryId: recovery.id,
    memberUserId: team.users.admin,
    approvalId: (held as { approvalId: string }).approvalId,
    policyVersion: policy.version,
  };
}

async function adminOf(team: TestTeam): Promise<Principal> {
  const u = await prisma().user.findUniqueOrThrow({ where: { id: team.users.admin } });
  return { type: "user", userId: u.id, email: u.email, teamId: team.teamId, role: "admin" };
}

/** Everything of both teams that a request could change. */
async function fingerprint(): Promise<string> {
  const teams = [w.a.teamId, w.b.teamId];
  const rows = await prisma().$queryRawUnsafe<{ f: string }[]>(
    `
    SELECT concat_ws('|',
      (SELECT md5(coalesce(string_agg(id || lifecycle || breaker || epoch || breaker_failures || breaker_held, ',' ORDER BY id), '')) FROM runs WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || coalesce(revoked_at::text, ''), ',' ORDER BY id), '')) FROM leases WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || state, ',' ORDER BY id), '')) FROM operations WHERE team_id = ANY($1)),
      (SELECT count(*) FROM barriers WHERE team_id = ANY($1)),
      (SELECT count(*) FROM effect_receipts WHERE team_id = ANY($1)),
      (SELECT count(*) FROM api_keys WHERE team_id = ANY($1) AND revoked_at IS NULL),
      (SELECT count(*) FROM memberships WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || state || coalesce(assignee_user_id, ''), ',' ORDER BY id), '')) FROM recovery_items WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(run_id || coalesce(status_at::text, '') || coalesce(resolved_at::text, ''), ',' ORDER BY run_id), '')) FROM run_environments WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || coalesce(provider_name, '') || coalesce(provider_job_id, ''), ',' ORDER BY id), '')) FROM operations WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || state, ',' ORDER BY id), '')) FROM approvals WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || coalesce(policy_version::text, '-'), ',' ORDER BY id), '')) FROM teams WHERE id = ANY($1)),
      (SELECT count(*) FROM policy_versions WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || name || coalesce(endpoint, '') || coalesce(job_url, ''), ',' ORDER BY id), '')) FROM providers WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id::text || hash, ',' ORDER BY id), '')) FROM audit_events WHERE team_id = ANY($1))
    ) AS f`,
    teams,
  );
  return rows[0]!.f;
}

beforeAll(async () => {
  w = await makeWorld();
  targets.a = await makeTarget(w.a);
  targets.b = await makeTarget(w.b);
  const revoked = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "revoked" });
  await revokeApiKey(SYSTEM, revoked.id);
  const expired = await createApiKey(SYSTEM, {
    teamId: w.a.teamId,
    kind: "agent",
    name: "expired",
    expiresAt: new Date(Date.now() - 1000),
  });
  const managerId = newId("user");
  await prisma().user.create({ data: { id: managerId, email: `manager.${managerId.toLowerCase()}@matrix.test`, name: "manager" } });
  await prisma().membership.create({ data: { id: newId("mem"), teamId: w.a.teamId, userId: managerId, role: "manager" } });
  const manager = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "operator", name: "manager", userId: managerId });
  const disabledId = newId("user");
  await prisma().user.create({ data: { id: disabledId, email: `disabled.${disabledId.toLowerCase()}@matrix.test`, name: "disabled" } });
  await prisma().membership.create({ data: { id: newId("mem"), teamId: w.a.teamId, userId: disabledId, role: "admin" } });
  const disabled = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "operator", name: "disabled", userId: disabledId });
  await setUserDisabled(SYSTEM, { userId: disabledId, disabled: true });
  // The third kind of caller: a key of the same team, of the same kind, that holds nothing.
  const agent2 = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "agent-2" });
  const key = (kind: "agent" | "worker" | "gateway"): Caller => ({ type: "key", kind, role: null, scopes: [] });
  const op = (role: "viewer" | "operator" | "manager" | "admin" | null): Caller => ({ type: "key", kind: "operator", role, scopes: [] });
  principals = [
    { name: "none", secret: null, team: null, caller: null },
    { name: "malformed", secret: null, header: "Bearer not-a-quiesce-key", team: null, caller: null },
    { name: "basic-auth", secret: null, header: "Basic dXNlcjpwYXNz", team: null, caller: null },
    { name: "revoked", secret: revoked.secret, team: null, caller: null },
    { name: "expired", secret: expired.secret, team: null, caller: null },
    { name: "agent", secret: w.a.keys.agent, team: "a", caller: key("agent") },
    { name: "agent-2", secret: agent2.secret, team: "a", caller: key("agent") },
    { name: "worker", secret: w.a.keys.worker, team: "a", caller: key("worker") },
    { name: "gateway", secret: w.a.keys.gateway, team: "a", caller: key("gateway") },
    { name: "viewer", secret: w.a.keys.viewerOperator, team: "a", caller: op("viewer") },
    { name: "operator", secret: w.a.keys.operator, team: "a", caller: op("operator") },
    { name: "manager", secret: manager.secret, team: "a", caller: op("manager") },
    { name: "admin", secret: w.a.keys.admin, team: "a", caller: op("admin") },
    { name: "disabled-user", secret: disabled.secret, team: "a", caller: op(null) },
    { name: "other-agent", secret: w.b.keys.agent, team: "b", caller: key("agent") },
    { name: "other-admin", secret: w.b.keys.admin, team: "b", caller: op("admin") },
  ];
});
afterAll(async () => {
  await w?.close();
});

/** The principal's part in its own team ("other-agent" is team B's agent, the holder of B's target). */
const roleIn = (who: Who) => who.name.replace(/^other-/, "");

function fillPath(p: string, t: Target, opId: string): string {
  return p
    .replace("{runId}", t.runId)
    .replace("{barrierId}", t.barrierId)
    .replace("{operationId}", opId)
    .replace("{stopId}", t.stopId)
    .replace("{recoveryId}", t.recoveryId)
    .replace("{approvalId}", t.approvalId)
    .replace("{version}", String(t.policyVersion));
}

async function call(method: string, url: string, who: Who, body: unknown, stream: boolean): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (who.header) headers.authorization = who.header;
  else if (who.secret) headers.authorization = `Bearer ${who.secret}`;
  const ac = new AbortController();
  const res = await fetch(w.server.url + url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: ac.signal,
  });
  if (stream && res.status === 200) {
    ac.abort();
    return { status: 200, json: null };
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json };
}

describe("the matrix covers every route", () => {
  test("route files, the OpenAPI document and the matrix entries name the same operations", async () => {
    const routes = await discoveredRoutes();
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = new Map<string, string>();
    for (const [p, ops] of Object.entries(doc.paths))
      for (const [m, o] of Object.entries(ops)) documented.set(`${m.toUpperCase()} ${p}`, o.operationId);
    expect(routes.map((r) => r.key).sort()).toEqual([...documented.keys()].sort());
    const missing = [...documented.values()].filter((id) => !(id in ENTRIES));
    expect(missing, "operations without a matrix entry").toEqual([]);
    expect(
      Object.keys(ENTRIES).filter((id) => ![...documented.values()].includes(id)),
      "stale matrix entries",
    ).toEqual([]);
  });
});

test("every operation × every principal × own and other team's resource: the status isAllowed predicts, and nothing changes on refusal", async () => {
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
  const failures: string[] = [];
  let requests = 0;
  let n = 0;
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, o] of Object.entries(ops)) {
      const entry = ENTRIES[o.operationId]!;
      for (const who of principals) {
        for (const where of ["a", "b"] as const) {
          if (where === "b" && entry.crossTeam === "none") continue;
          // "own" is the principal's own team (team A for the unauthenticated ones); "other" the other team.
          const home = who.team ?? "a";
          const resTeam = where === "a" ? home : home === "a" ? "b" : "a";
          const t = targets[resTeam];
          const uniq = `${++n}`;
          const opId = o.operationId === "completeOperation" || o.operationId === "providerOperation" ? t.runningOpId : t.operationId;
          const url = fillPath(p, t, opId) + (entry.query ?? "");
          const body = m === "post" || m === "put" ? (entry.body ? entry.body(t, uniq) : {}) : undefined;
          let expected: number | "ok" | "deny";
          if (entry.action === null) expected = 200;
          else if (!who.caller) expected = 401;
          else if (!isAllowed(who.caller, entry.action)) expected = 403;
          else if (resTeam !== home) expected = entry.crossTeam === "deny" ? "deny" : 404;
          else if (entry.holders && !entry.holders.includes(roleIn(who))) expected = 403;
          else expected = "ok";
          const refused = expected !== "ok" && expected !== 200;
          const before = refused ? await fingerprint() : "";
          const r = await call(m.toUpperCase(), url, who, body, entry.stream === true);
          requests++;
          const label = `${o.operationId} as ${who.name} on ${where === "a" ? "own" : "other"} team's resource`;
          if (r.status >= 500) failures.push(`${label}: ${r.status}`);
          else if (expected === "ok") {
            if (r.status === 401 || r.status === 403)
              failures.push(`${label}: expected to be allowed, got ${r.status} ${r.json?.error?.message ?? ""}`);
          } else if (expected === "deny") {
            if (r.status !== 200 || r.json?.decision !== "deny" || r.json?.reason !== "missing_state")
              failures.push(`${label}: expected deny missing_state, got ${r.status} ${JSON.stringify(r.json)}`);
          } else if (r.status !== expected) {
            failures.push(`${label}: expected ${expected}, got ${r.status} ${r.json?.error?.message ?? ""}`);
          }
          // A lease id is a capability: only the run's holder reads it.
          if (o.operationId === "getRun" && r.status === 200) {
            const ids = (r.json?.leases ?? []).map((l: { leaseId: string | null }) => l.leaseId);
            const want = RUN_HOLDERS.includes(roleIn(who)) && resTeam === home ? [t.leaseId] : [null];
            if (JSON.stringify(ids) !== JSON.stringify(want))
              failures.push(`${label}: lease ids ${JSON.stringify(ids)}, expected ${JSON.stringify(want)}`);
          }
          if (r.status >= 400 && !(r.json?.error?.code && r.json?.error?.message))
            failures.push(`${label}: ${r.status} without an error body`);
          if (refused && (await fingerprint()) !== before) failures.push(`${label}: refused (${r.status}) but something changed`);
        }
      }
    }
  }
  expect(failures).toEqual([]);
  expect(requests).toBeGreaterThan(400);
}, 240_000);

describe("server actions", () => {
  const actionFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const full = path.join(dir, n);
      return statSync(full).isDirectory() ? actionFiles(full) : n === "actions.ts" ? [full] : [];
    });

  test("every exported server action goes through runAction with a declared permission", () => {
    const files = actionFiles(path.join(ROOT, "app"));
    expect(files.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const file of files) {
      const src = readFileSync(file, "utf8");
      expect(src.trimStart().startsWith('"use server"'), file).toBe(true);
      // An action is an async function calling runAction, or declared through serverAction (which calls it).
      const exported = [
        ...[...src.matchAll(/export async function (\w+)\s*\(([^)]*)\)\s*\{([\s\S]*?)\n\}/g)].map((m) => [m[1], m[3]] as const),
        ...[...src.matchAll(/export const (\w+) = (serverAction\([\s\S]*?)\n\}?\);/g)].map((m) => [m[1], m[2]] as const),
      ];
      for (const [name, fnBody] of exported) {
        // The permission is a string or a function of the input returning one of several strings.
        const spec = /(?:runAction|serverAction)\(\s*\{[\s\S]*?\baction:\s*([^\n]*?)(?:,\s*revalidate\b|\s*\},)/.exec(fnBody!);
        const named = spec ? [...spec[1]!.matchAll(/"([a-z]+\.[a-z]+)"/g)].map((x) => x[1]!) : [];
        if (named.length === 0) {
          problems.push(`${path.relative(ROOT, file)} ${name}: does not call runAction with a permission`);
          continue;
        }
        for (const a of named) if (!(ACTIONS as readonly string[]).includes(a)) problems.push(`${name}: unknown permission ${a}`);
      }
      const all = [...src.matchAll(/export (?:async )?(?:function|const) (\w+)/g)].map((x) => x[1]);
      if (all.length !== exported.length)
        problems.push(`${path.relative(ROOT, file)}: exports something other than runAction-wrapped async functions`);
    }
    expect(problems).toEqual([]);
  });
});
