// The authorization matrix for server actions, dynamically: every action the production build registered
// (`.next/server/server-reference-manifest.json`: action id → module and exported name) is POSTed over
// HTTP with the `Next-Action` header — exactly what a browser, or an attacker who read the page's
// JavaScript, sends — as every principal: no session, a malformed cookie, a cookie signed with the wrong
// secret, a session past its absolute lifetime, one past its idle timeout, a signed-out (revoked)
// session, an operator API key sent as a bearer token, each role of team demo, and an admin of team
// other; against its own team's resource and the other team's. A refusal must answer the refusal shape
// and change nothing (row counts of the tables actions write, the targeted row, no new audit row by a
// person, no team cookie). Each action succeeds for every role the permission table allows (on a fresh
// resource each time).
//
// The list of actions comes from the build, not from this file: an action with no entry in MATRIX, or
// an entry whose action no longer exists, fails the first test.
import { readFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { expect, request as playwrightRequest, test, type APIRequestContext } from "@playwright/test";
import { encode } from "next-auth/jwt";
import { isAllowed, type Action } from "../../lib/control/authz";
import type { Role } from "../../lib/control/types";
import { e2e, USERS } from "../support/env";
import { uid, type ApiRun } from "../support/api";
import { closeDb, db, one } from "../support/db";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SESSION_COOKIE = "next-auth.session-token";

// ---------------------------------------------------------------- the build's action registry

interface Registered {
  id: string;
  key: string; // "<module>#<export>"
  worker: string; // a page whose bundle carries the action, e.g. app/(console)/runs/[runId]/page
}

function registry(): Registered[] {
  const file = path.join(ROOT, ".next/server/server-reference-manifest.json");
  const m = JSON.parse(readFileSync(file, "utf8")) as {
    node: Record<string, { filename?: string; exportedName?: string; workers: Record<string, unknown> }>;
  };
  return Object.entries(m.node).map(([id, e]) => {
    if (!e.filename || !e.exportedName) throw new Error(`action ${id} has no module/export in the manifest`);
    // Paths are relative to Turbopack's root, which may be a folder above this checkout (a shared node_modules).
    const file = e.filename.replaceAll("\\", "/");
    const mod = file.startsWith("app/") ? file : file.slice(file.indexOf("/app/") + 1);
    return { id, key: `${mod}#${e.exportedName}`, worker: Object.keys(e.workers).sort()[0]! };
  });
}

/** The URL of the page a worker renders (route groups dropped, dynamic segments filled). */
function pageUrl(worker: string, params: Record<string, string>): string {
  const segments = worker
    .replace(/^app\//, "")
    .replace(/\/page$/, "")
    .split("/")
    .filter((s) => !/^\(.*\)$/.test(s))
    .map((s) => {
      const name = /^\[(.+)\]$/.exec(s)?.[1];
      if (!name) return s;
      if (!params[name]) throw new Error(`no value for [${name}] of ${worker}`);
      return params[name]!;
    });
  return `/${segments.join("/")}`;
}

// ---------------------------------------------------------------- fixtures (real rows, real API)

type Team = "demo" | "other";
const PASSWORD_FROM = USERS.viewer; // fixture users get this seeded user's password hash (the demo password)

async function teamId(team: Team): Promise<string> {
  return (await one<{ id: string }>("SELECT id FROM teams WHERE slug = $1", [team])).id;
}

async function userId(email: string): Promise<string> {
  return (await one<{ id: string }>("SELECT id FROM users WHERE email = $1", [email])).id;
}

/** A new user with the demo password, a member of `team` with `role`. */
async function newMember(team: Team, role: Role, label = "member"): Promise<{ id: string; email: string }> {
  const id = `user_matrix${randomBytes(6).toString("hex")}`;
  const email = `matrix.${label}.${id.slice(11)}@example.test`;
  const d = await db();
  await d.query("INSERT INTO users (id, email, name, password_hash) SELECT $1, $2, $3, password_hash FROM users WHERE email = $4", [
    id,
    email,
    `Matrix ${label}`,
    PASSWORD_FROM,
  ]);
  await d.query('INSERT INTO memberships (id, team_id, user_id, role) VALUES ($1, $2, $3, $4::"Role")', [
    `mem_matrix${randomBytes(6).toString("hex")}`,
    await teamId(team),
    id,
    role,
  ]);
  return { id, email };
}

const agentOf = (team: Team) => (team === "demo" ? e2e.agent() : e2e.otherTeamAgent());

async function newRun(team: Team): Promise<ApiRun> {
  return agentOf(team).createRun({ taskId: uid("matrix"), title: "authorization matrix fixture" });
}

async function pausedRun(team: Team): Promise<ApiRun> {
  const run = await newRun(team);
  await (
    await db()
  ).query("UPDATE runs SET lifecycle = 'paused', lifecycle_changed_by = 'system:matrix-fixture' WHERE id = $1", [run.runId]);
  return run;
}

async function newKey(team: Team): Promise<string> {
  const id = `key_matrix${randomBytes(6).toString("hex")}`;
  await (
    await db()
  ).query("INSERT INTO api_keys (id, team_id, kind, name, scopes, secret_hash) VALUES ($1, $2, 'agent', 'matrix fixture', '{}', $3)", [
    id,
    await teamId(team),
    randomBytes(32).toString("hex"),
  ]);
  return id;
}

/** A saved view of the runs list in `team`, owned by `owner` (a view is its owner's alone). */
async function newView(team: Team, owner: string): Promise<string> {
  const id = `view_matrix${randomBytes(6).toString("hex")}`;
  await (
    await db()
  ).query("INSERT INTO saved_views (id, team_id, user_id, name, query) VALUES ($1, $2, $3, $4, 'status=paused')", [
    id,
    await teamId(team),
    owner,
    uid("matrix-view"),
  ]);
  return id;
}

async function newEndpoint(team: Team): Promise<string> {
  const id = `whk_matrix${randomBytes(6).toString("hex")}`;
  await (
    await db()
  ).query(
    // Disabled: background events (receipts of earlier kills) must not queue deliveries for it mid-check.
    "INSERT INTO webhook_endpoints (id, team_id, url, secret, event_types, enabled, created_by) VALUES ($1, $2, 'http://127.0.0.1:9/matrix', $3, '{*}', false, 'system:matrix-fixture')",
    [id, await teamId(team), `whsec_${randomBytes(24).toString("base64url")}`],
  );
  return id;
}

async function deadDelivery(team: Team): Promise<string> {
  const endpoint = await newEndpoint(team);
  const r = await one<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event, status, attempts, last_error)
     VALUES ($1, $2, $3, 'run.paused', $1, '{}'::jsonb, 'dead', 3, 'matrix fixture') RETURNING id::text`,
    [`evt_matrix${randomBytes(6).toString("hex")}`, endpoint, await teamId(team)],
  );
  return r.id;
}

/** An unknown outcome (the trigger opens its reconciliation), assigned to `assignee` when given. */
async function newReconciliation(team: Team, assignee?: string): Promise<string> {
  const run = await newRun(team);
  const opId = uid("matrix-op");
  const g = await agentOf(team).gate(run, opId, "matrix.tool");
  expect(g.decision).toBe("allow");
  const d = await db();
  await d.query("UPDATE operations SET state = 'aborted_unknown' WHERE run_id = $1 AND operation_id = $2", [run.runId, opId]);
  const r = await one<{ id: string }>(
    "SELECT r.id FROM reconciliations r JOIN operations o ON o.id = r.operation_id WHERE o.run_id = $1 AND o.operation_id = $2",
    [run.runId, opId],
  );
  if (assignee) await d.query("UPDATE reconciliations SET assignee_user_id = $2, status = 'assigned' WHERE id = $1", [r.id, assignee]);
  return r.id;
}

/** A pause scope of `team` that matches nothing (lifting it changes only its own row). */
async function newPauseScope(team: Team): Promise<string> {
  const id = `scope_matrix${randomBytes(6).toString("hex")}`;
  const prefix = uid("matrix-nothing");
  await (
    await db()
  ).query(
    `INSERT INTO stop_scopes (id, team_id, action, filter, f_harness, f_agent, f_task_prefix, f_status, f_run_ids, reason, requested_by)
     VALUES ($1, $2, 'pause', $3::jsonb, '{}', '{}', $4, '{}', '{}', 'matrix fixture', 'system:matrix-fixture')`,
    [id, await teamId(team), JSON.stringify({ taskPrefix: prefix }), prefix],
  );
  return id;
}

/**
 * A recovery item of `team` (docs/evidence.md#recovery): a completed barrier whose settlement found the
 * effect completed opens it at commit. Its provider declares a compensation URL that answers nothing, so
 * "start" leaves it in progress; owned by `assignee` when given.
 */
async function newRecovery(team: Team, assignee?: string): Promise<string> {
  const run = await newRun(team);
  const opId = uid("matrix-op");
  expect((await agentOf(team).gate(run, opId, "matrix.tool")).decision).toBe("allow");
  const d = await db();
  const t = await teamId(team);
  await d.query(
    `INSERT INTO providers (id, team_id, name, kind, compensate_url, status_url, timeout_ms)
     VALUES ($1, $2, 'matrix-undo', 'http', 'http://127.0.0.1:9/compensate', 'http://127.0.0.1:9/status', 500) ON CONFLICT (team_id, name) DO NOTHING`,
    [`prov_matrix${randomBytes(6).toString("hex")}`, t],
  );
  const op = await one<{ id: string }>("SELECT id FROM operations WHERE run_id = $1 AND operation_id = $2", [run.runId, opId]);
  await d.query("UPDATE operations SET provider_name = 'matrix-undo', provider_job_id = $2, state = 'succeeded' WHERE id = $1", [
    op.id,
    uid("job"),
  ]);
  const barrierId = `stop_matrix${randomBytes(6).toString("hex")}`;
  await d.query(
    `INSERT INTO barriers (id, team_id, run_id, requested_by, reason, new_epoch, policy, phase) VALUES ($1, $2, $3, 'system:matrix-fixture', 'matrix', 2, '{}', 'complete')`,
    [barrierId, t, run.runId],
  );
  await d.query(
    `INSERT INTO settlements (id, barrier_id, operation_id, state_at_barrier, settled_state, settled_at) VALUES ($1, $2, $3, 'running', 'completed_and_verified', now())`,
    [`set_matrix${randomBytes(6).toString("hex")}`, barrierId, op.id],
  );
  const r = await one<{ id: string }>("SELECT id FROM recovery_items WHERE operation_id = $1", [op.id]);
  if (assignee) await d.query("UPDATE recovery_items SET assignee_user_id = $2 WHERE id = $1", [r.id, assignee]);
  return r.id;
}

/** A killed root on settled ground (its barrier's latest receipt says stopped_and_quiet, nothing owed): it may restart once. */
async function settledKilledRoot(team: Team): Promise<ApiRun> {
  const run = await newRun(team);
  const d = await db();
  await d.query("UPDATE runs SET lifecycle = 'killed', lifecycle_changed_by = 'system:matrix-fixture' WHERE id = $1", [run.runId]);
  const barrierId = `stop_matrix${randomBytes(6).toString("hex")}`;
  await d.query(
    `INSERT INTO barriers (id, team_id, run_id, requested_by, reason, new_epoch, policy, phase) VALUES ($1, $2, $3, 'system:matrix-fixture', 'matrix', 2, '{}', 'complete')`,
    [barrierId, await teamId(team), run.runId],
  );
  const digest = randomBytes(32).toString("hex");
  await d.query(
    `INSERT INTO stop_receipts (id, barrier_id, version, canonical, body, decision, verified_at, digest) VALUES ($1, $2, 1, '{}', '{}', 'stopped_and_quiet', now(), $3)`,
    [`rcpt_matrix${randomBytes(6).toString("hex")}`, barrierId, digest],
  );
  return run;
}

/**
 * A pending approval on a fresh run of `team`, as the gate writes one and the engine's sweep has announced it
 * (announced_at set: the running sweep would otherwise set it between the check's two reads of the row); its
 * rule asks for an admin or the named `approver` (a viewer may answer when named), so every role can succeed on
 * its own team's card.
 */
async function newApproval(team: Team, approver?: string): Promise<string> {
  const run = await newRun(team);
  const id = `apr_matrix${randomBytes(6).toString("hex")}`;
  await one(
    `INSERT INTO approvals (id, team_id, run_id, root_run_id, run_path, lease_id, lease_path, epoch, operation_id, tool,
                            policy_version, rule_name, approver_role, approver_user_ids, expires_at, announced_at)
     SELECT $1, r.team_id, r.id, r.root_run_id, r.path, $2, ARRAY[$2], r.epoch, $3, 'matrix.tool', 1, 'matrix', 'admin', $4::text[],
            now() + interval '10 minutes', now()
       FROM runs r WHERE r.id = $5 RETURNING id`,
    [id, run.leaseId, uid("matrix-op"), approver ? [approver] : [], run.runId],
  );
  return id;
}

/** A saved (not enabled) empty policy version of `team`, numbered after its last. */
async function newPolicyVersion(team: Team): Promise<number> {
  const r = await one<{ version: number }>(
    `INSERT INTO policy_versions (team_id, version, document, redact_keys, created_by)
     SELECT t.id, coalesce((SELECT max(version) FROM policy_versions WHERE team_id = t.id), 0) + 1,
            '{"rules": [], "redactKeys": []}'::jsonb, '{}', 'system:matrix-fixture'
       FROM teams t WHERE t.slug = $1 RETURNING version`,
    [team],
  );
  return r.version;
}

// ---------------------------------------------------------------- the matrix

interface Caller {
  name: string;
  userId: string | null;
  /** A member of team other (not demo). */
  otherTeam?: boolean;
}

/** Whether the caller is a member of `team` (and so may be assigned its reconciliations). */
const memberOf = (c: Caller, team: Team) => c.userId !== null && (team === "other") === Boolean(c.otherTeam);
let otherAdminId = "";

interface Entry {
  /** The permission runAction declares (the same `isAllowed` table decides for the API matrix). */
  permission: Action;
  /** "id": the input names a resource, so another team's must answer not_found. "none": it acts on the caller's team. */
  crossTeam: "id" | "none";
  /** The argument, on a fresh resource of `team`; `caller` is who will post it. */
  input(team: Team, caller: Caller): Promise<Record<string, unknown>>;
  /** The row the action would change: [table, id column, id]. */
  target?(input: Record<string, unknown>): [string, string, string];
  /** Values for the page's dynamic segments. */
  params?(input: Record<string, unknown>): Record<string, string>;
}

const reason = "authorization matrix";
const runTarget = (i: Record<string, unknown>): [string, string, string] => ["runs", "id", String(i.runId)];
const runParams = (i: Record<string, unknown>) => ({ runId: String(i.runId) });

const MATRIX: Record<string, Entry> = {
  "app/(console)/actions.ts#switchTeamAction": {
    permission: "run.read",
    crossTeam: "id",
    input: async (team) => ({ slug: team }),
  },
  "app/(console)/account/actions.ts#changePasswordAction": {
    // Any signed-in member, for their own account only (it names no resource: nothing of another team).
    permission: "run.read",
    crossTeam: "none",
    // The same password again: it succeeds (and re-issues the caller's session, which the context keeps)
    // while every other journey can still sign in with the demo password.
    input: async () => ({ currentPassword: e2e.password, newPassword: e2e.password }),
  },
  "app/(console)/approvals/actions.ts#decideApprovalAction": {
    permission: "approval.decide",
    crossTeam: "id",
    // Named on the card when the caller is a member of its team: the rule's role alone would refuse a viewer.
    input: async (team, caller) => ({
      approvalId: await newApproval(team, memberOf(caller, team) ? caller.userId! : undefined),
      decision: "approve",
      note: "authorization matrix",
    }),
    target: (i) => ["approvals", "id", String(i.approvalId)],
  },
  "app/(console)/policies/actions.ts#savePolicyVersionAction": {
    permission: "policy.write",
    crossTeam: "none",
    input: async () => ({ document: JSON.stringify({ rules: [], note: "authorization matrix" }) }),
  },
  "app/(console)/policies/actions.ts#dryRunPolicyAction": {
    // A version number is the caller's team's own (another team's number 3 is not a resource of this one).
    permission: "policy.write",
    crossTeam: "none",
    input: async () => ({ version: await newPolicyVersion("demo"), days: 1 }),
  },
  "app/(console)/policies/actions.ts#enablePolicyAction": {
    permission: "policy.write",
    crossTeam: "none",
    // Turning the policy off: it succeeds and leaves the journeys after this one a gate without rules.
    input: async () => ({ version: null, reason }),
    target: () => ["teams", "slug", "demo"],
  },
  "app/(console)/(lists)/reconciliations/actions.ts#assignReconciliationAction": {
    permission: "reconciliation.assign",
    crossTeam: "id",
    input: async (team) => ({
      reconciliationId: await newReconciliation(team),
      // a member of the reconciliation's own team (assigning someone else is a bad request, not this matrix)
      assigneeUserId: team === "demo" ? await userId(USERS.operator) : otherAdminId,
    }),
    target: (i) => ["reconciliations", "id", String(i.reconciliationId)],
  },
  "app/(console)/(lists)/reconciliations/actions.ts#resolveReconciliationAction": {
    permission: "reconciliation.resolve",
    crossTeam: "id",
    // Assigned to the caller: only the assignee (or a manager/admin) may resolve, so each role can succeed.
    input: async (team, caller) => ({
      reconciliationId: await newReconciliation(team, memberOf(caller, team) ? caller.userId! : undefined),
      resolution: "effect_absent",
      evidence: "checked the provider console: no such job",
    }),
    target: (i) => ["reconciliations", "id", String(i.reconciliationId)],
  },
  "app/(console)/(lists)/reconciliations/actions.ts#assignRecoveryAction": {
    permission: "reconciliation.assign",
    crossTeam: "id",
    input: async (team) => ({
      recoveryId: await newRecovery(team),
      assigneeUserId: team === "demo" ? await userId(USERS.operator) : otherAdminId,
    }),
    target: (i) => ["recovery_items", "id", String(i.recoveryId)],
  },
  // Owned by the caller: only the owner (or a manager/admin) may act, so each role can succeed.
  "app/(console)/(lists)/reconciliations/actions.ts#startRecoveryAction": {
    permission: "reconciliation.resolve",
    crossTeam: "id",
    input: async (team, caller) => ({ recoveryId: await newRecovery(team, memberOf(caller, team) ? caller.userId! : undefined) }),
    target: (i) => ["recovery_items", "id", String(i.recoveryId)],
  },
  "app/(console)/(lists)/reconciliations/actions.ts#recordRecoveryAction": {
    permission: "reconciliation.resolve",
    crossTeam: "id",
    input: async (team, caller) => ({
      recoveryId: await newRecovery(team, memberOf(caller, team) ? caller.userId! : undefined),
      state: "accepted",
      note: "the preview is wanted",
      evidence: "matrix ticket",
    }),
    target: (i) => ["recovery_items", "id", String(i.recoveryId)],
  },
  "app/(console)/(lists)/runs/actions.ts#createSavedViewAction": {
    permission: "run.read",
    crossTeam: "none",
    input: async () => ({ name: uid("matrix-view"), query: "status=paused&harness=codex" }),
  },
  "app/(console)/(lists)/runs/actions.ts#deleteSavedViewAction": {
    permission: "run.read",
    crossTeam: "id",
    // The caller's own view where it is a member (so every role can succeed); otherwise a member's.
    input: async (team, caller) => ({
      viewId: await newView(team, memberOf(caller, team) ? caller.userId! : team === "demo" ? await userId(USERS.operator) : otherAdminId),
    }),
    target: (i) => ["saved_views", "id", String(i.viewId)],
  },
  "app/(console)/(lists)/runs/actions.ts#matchingRunIdsAction": {
    permission: "fleet.stop",
    crossTeam: "none",
    // A read: the ids of the caller's team's runs matching a search (none here).
    input: async () => ({ query: `q=${uid("matrix-nothing")}` }),
  },
  "app/(console)/stops/actions.ts#fleetStopAction": {
    permission: "fleet.stop",
    crossTeam: "none",
    input: async () => ({ action: "pause", filter: { taskPrefix: uid("matrix-nothing") }, reason, dryRun: false }),
  },
  "app/(console)/stops/actions.ts#liftStopAction": {
    permission: "fleet.stop",
    crossTeam: "id",
    input: async (team) => ({ stopId: await newPauseScope(team), reason }),
    target: (i) => ["stop_scopes", "id", String(i.stopId)],
    params: (i) => ({ stopId: String(i.stopId) }),
  },
  "app/(console)/keys/actions.ts#createKeyAction": {
    permission: "key.manage",
    crossTeam: "none",
    input: async () => ({ name: uid("matrix-key"), kind: "agent" }),
  },
  "app/(console)/keys/actions.ts#revokeKeyAction": {
    permission: "key.manage",
    crossTeam: "id",
    input: async (team) => ({ keyId: await newKey(team) }),
    target: (i) => ["api_keys", "id", String(i.keyId)],
  },
  "app/(console)/people/actions.ts#removeMemberAction": {
    permission: "member.manage",
    crossTeam: "id",
    input: async (team) => ({ userId: (await newMember(team, "viewer", "removable")).id }),
    target: (i) => ["memberships", "user_id", String(i.userId)],
  },
  "app/(console)/people/actions.ts#setMemberRoleAction": {
    permission: "member.manage",
    crossTeam: "id",
    input: async (team) => ({ userId: (await newMember(team, "viewer", "promotable")).id, role: "operator" }),
    target: (i) => ["memberships", "user_id", String(i.userId)],
  },
  "app/(console)/people/actions.ts#setMembershipDisabledAction": {
    permission: "member.manage",
    crossTeam: "id",
    input: async (team) => ({ userId: (await newMember(team, "viewer", "suspendable")).id, disabled: true }),
    target: (i) => ["memberships", "user_id", String(i.userId)],
  },
  // A member of this team only, so the team's admin is an admin of every team of the user.
  "app/(console)/people/actions.ts#setUserDisabledAction": {
    permission: "member.manage",
    crossTeam: "id",
    input: async (team) => ({ userId: (await newMember(team, "viewer", "disableable")).id, disabled: true }),
    target: (i) => ["users", "id", String(i.userId)],
  },
  "app/(console)/runs/[runId]/actions.ts#breakerAction": {
    permission: "breaker.trip",
    crossTeam: "id",
    input: async (team) => ({ runId: (await newRun(team)).runId, action: "trip", reason }),
    target: runTarget,
    params: runParams,
  },
  "app/(console)/runs/[runId]/actions.ts#killRunAction": {
    permission: "run.kill",
    crossTeam: "id",
    input: async (team) => ({ runId: (await newRun(team)).runId, reason }),
    target: runTarget,
    params: runParams,
  },
  "app/(console)/runs/[runId]/actions.ts#restartRunAction": {
    permission: "run.resume",
    crossTeam: "id",
    input: async (team) => ({ runId: (await settledKilledRoot(team)).runId, reason }),
    target: runTarget,
    params: runParams,
  },
  "app/(console)/runs/[runId]/actions.ts#pauseRunAction": {
    permission: "run.pause",
    crossTeam: "id",
    input: async (team) => ({ runId: (await newRun(team)).runId, reason }),
    target: runTarget,
    params: runParams,
  },
  "app/(console)/runs/[runId]/actions.ts#resumeRunAction": {
    permission: "run.resume",
    crossTeam: "id",
    input: async (team) => ({ runId: (await pausedRun(team)).runId, reason }),
    target: runTarget,
    params: runParams,
  },
  "app/(console)/webhooks/actions.ts#createWebhookAction": {
    permission: "key.manage",
    crossTeam: "none",
    input: async () => ({ url: `http://127.0.0.1:9/${uid("matrix")}`, eventTypes: ["*"] }),
  },
  "app/(console)/webhooks/actions.ts#deleteWebhookAction": {
    permission: "key.manage",
    crossTeam: "id",
    input: async (team) => ({ endpointId: await newEndpoint(team) }),
    target: (i) => ["webhook_endpoints", "id", String(i.endpointId)],
  },
  "app/(console)/webhooks/actions.ts#retryWebhookDeliveryAction": {
    permission: "key.manage",
    crossTeam: "id",
    input: async (team) => ({ deliveryId: await deadDelivery(team) }),
    target: (i) => ["webhook_deliveries", "id", String(i.deliveryId)],
  },
  "app/(console)/webhooks/actions.ts#rotateWebhookSecretAction": {
    permission: "key.manage",
    crossTeam: "id",
    input: async (team) => ({ endpointId: await newEndpoint(team) }),
    target: (i) => ["webhook_endpoints", "id", String(i.endpointId)],
  },
};

// ---------------------------------------------------------------- principals

interface Principal extends Caller {
  /** The signed-in member's role (in team demo, or in team other for its admin); null for the broken sessions. */
  role: Role | null;
  ctx: APIRequestContext;
}

async function context(cookie?: string): Promise<APIRequestContext> {
  return playwrightRequest.newContext({
    baseURL: e2e.baseUrl,
    extraHTTPHeaders: cookie ? { cookie: `${SESSION_COOKIE}=${cookie}` } : {},
  });
}

/** Signs in through next-auth's real credentials endpoint; the context keeps the session cookie. */
async function signedIn(email: string): Promise<APIRequestContext> {
  const ctx = await playwrightRequest.newContext({ baseURL: e2e.baseUrl });
  const { csrfToken } = (await (await ctx.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await ctx.post("/api/auth/callback/credentials", {
    form: { email, password: e2e.password, csrfToken, json: "true" },
    maxRedirects: 0,
  });
  expect([200, 302]).toContain(res.status());
  const cookies = (await ctx.storageState()).cookies;
  expect(
    cookies.some((c) => c.name === SESSION_COOKIE),
    `signed in as ${email}`,
  ).toBe(true);
  return ctx;
}

async function mint(claims: { sub: string; sv: number; authAt: number }, maxAge: number, secret = e2e.nextAuthSecret) {
  return encode({ token: { email: "matrix@example.test", name: "matrix", ...claims }, secret, maxAge });
}

const principals: Principal[] = [];

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const now = Math.floor(Date.now() / 1000);
  const viewer = await one<{ id: string; session_version: number }>("SELECT id, session_version FROM users WHERE email = $1", [
    USERS.viewer,
  ]);
  const good = { sub: viewer.id, sv: viewer.session_version, authAt: now };
  // A session signed out afterwards: a throwaway user (sign-out ends every session of the user).
  const leaver = await newMember("demo", "admin", "leaver");
  const leaving = await signedIn(leaver.email);
  const stolen = (await leaving.storageState()).cookies.find((c) => c.name === SESSION_COOKIE)!.value;
  const copy = await context(stolen);
  expect((await copy.get("/api/console/runs")).status(), "the copied cookie works before sign-out").toBe(200);
  const { csrfToken } = (await (await leaving.get("/api/auth/csrf")).json()) as { csrfToken: string };
  await leaving.post("/api/auth/signout", { form: { csrfToken, json: "true" }, maxRedirects: 0 });
  await leaving.dispose();
  expect((await copy.get("/api/console/runs")).status(), "and not after").toBe(401);
  await copy.dispose();
  // Control for the minted cookies: the same minting with a current sign-in time and the right secret is
  // accepted, so the expired and forged ones below are refused for their expiry or signature alone.
  const minted = await context(await mint(good, 3600));
  expect((await minted.get("/api/console/runs")).status(), "a correctly minted cookie is accepted").toBe(200);
  await minted.dispose();
  const otherAdmin = await newMember("other", "admin", "other-admin");
  otherAdminId = otherAdmin.id;

  principals.push(
    { name: "no session", role: null, userId: null, ctx: await context() },
    { name: "malformed cookie", role: null, userId: null, ctx: await context("not-a-session-token") },
    { name: "cookie signed with another secret", role: null, userId: null, ctx: await context(await mint(good, 3600, "x".repeat(43))) },
    {
      name: "past the absolute lifetime",
      role: null,
      userId: null,
      ctx: await context(await mint({ ...good, authAt: now - 13 * 3600 }, 3600)),
    },
    { name: "past the idle timeout", role: null, userId: null, ctx: await context(await mint(good, -60)) },
    { name: "signed out (revoked)", role: null, userId: null, ctx: await context(stolen) },
    // A machine credential is no session: the operator API key of team demo, as a bearer token.
    {
      name: "operator API key (bearer, no session)",
      role: null,
      userId: null,
      ctx: await playwrightRequest.newContext({
        baseURL: e2e.baseUrl,
        extraHTTPHeaders: { authorization: `Bearer ${e2e.keys().operator!.secret}` },
      }),
    },
  );
  for (const role of ["viewer", "operator", "manager", "admin"] as const) {
    principals.push({ name: role, role, userId: await userId(USERS[role]), ctx: await signedIn(USERS[role]) });
  }
  principals.push({
    name: "admin of team other",
    role: "admin",
    otherTeam: true,
    userId: otherAdmin.id,
    ctx: await signedIn(otherAdmin.email),
  });
});

test.afterAll(async () => {
  for (const p of principals) await p.ctx.dispose();
  // The endpoints createWebhookAction made are enabled and subscribe to everything: left in place they
  // would collect (dead-letter) the events of later journeys. Their deliveries go with them (cascade).
  await (await db()).query("DELETE FROM webhook_endpoints WHERE url LIKE 'http://127.0.0.1:9/%'");
  await closeDb();
});

// ---------------------------------------------------------------- one call, and what must not change

interface Answer {
  status: number;
  location: string | null;
  result: { ok: boolean; code?: string; message?: string; data?: unknown } | null;
  setsTeamCookie: boolean;
  text: string;
}

/** The React Flight answer of an action: rows `<id>:<json>`; row 0 points at the result (`"a":"$@<n>"`). */
function flightResult(text: string): Answer["result"] {
  const rows = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]+):(.*)$/.exec(line);
    if (m) rows.set(m[1]!, m[2]!);
  }
  const root = rows.get("0");
  if (!root) return null;
  const ref = /"a":"\$@([0-9a-f]+)"/.exec(root)?.[1];
  const raw = ref ? rows.get(ref) : undefined;
  return raw ? (JSON.parse(raw) as Answer["result"]) : null;
}

async function post(p: Principal, reg: Registered, url: string, arg: unknown): Promise<Answer> {
  const res = await p.ctx.post(url, {
    headers: { "Next-Action": reg.id, "Content-Type": "text/plain;charset=UTF-8", Accept: "text/x-component", Origin: e2e.baseUrl },
    data: JSON.stringify([arg]),
    maxRedirects: 0,
  });
  const text = await res.text();
  return {
    status: res.status(),
    location: res.headers()["location"] ?? null,
    result: res.status() === 200 ? flightResult(text) : null,
    setsTeamCookie: res.headersArray().some((h) => h.name.toLowerCase() === "set-cookie" && h.value.startsWith("quiesce_team=")),
    text,
  };
}

// The tables server actions write. Deliveries only of the fixtures' (disabled) endpoints: the barrier
// engine keeps issuing receipts for earlier journeys' kills, which queue deliveries for enabled ones.
const COUNTED: Record<string, string> = {
  runs: "runs",
  operations: "operations",
  barriers: "barriers",
  stop_scopes: "stop_scopes",
  stop_scope_targets: "stop_scope_targets",
  api_keys: "api_keys",
  webhook_endpoints: "webhook_endpoints",
  webhook_deliveries: "webhook_deliveries WHERE endpoint_id LIKE 'whk_matrix%'",
  memberships: "memberships",
  disabled_memberships: "disabled_memberships",
  users: "users",
  reconciliations: "reconciliations",
  saved_views: "saved_views",
  approvals: "approvals",
  policy_versions: "policy_versions",
  policy_rules: "policy_rules",
};

interface Snapshot {
  counts: Record<string, number>;
  target: string | null;
  auditId: string;
}

async function snapshot(target?: [string, string, string]): Promise<Snapshot> {
  const d = await db();
  const counts: Record<string, number> = {};
  const r = await d.query<Record<string, string>>(
    `SELECT ${Object.entries(COUNTED)
      .map(([name, from]) => `(SELECT count(*) FROM ${from})::text AS ${name}`)
      .join(", ")}`,
  );
  for (const name of Object.keys(COUNTED)) counts[name] = Number(r.rows[0]![name]);
  const row = target
    ? ((await d.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM ${target[0]} x WHERE ${target[1]}::text = $1`, [target[2]]))
        .rows[0]?.j ?? "(none)")
    : null;
  const audit = await one<{ id: string }>("SELECT coalesce(max(id), 0)::text AS id FROM audit_events");
  return { counts, target: row, auditId: audit.id };
}

/** Audit rows since `after` written by a person or key (background engines write `system:…` rows). */
async function auditBy(after: string): Promise<string[]> {
  const r = await (
    await db()
  ).query<{ action: string; actor: string }>(
    "SELECT action, actor FROM audit_events WHERE id > $1::bigint AND actor NOT LIKE 'system:%' ORDER BY id",
    [after],
  );
  return r.rows.map((x) => `${x.action} by ${x.actor}`);
}

/** What the principal should get: "ok", or the refusal code ("redirect" = sent to sign-in before any code ran). */
function expected(p: Principal, entry: Entry, team: Team): "ok" | "unauthenticated" | "forbidden" | "not_found" {
  if (p.role === null) return "unauthenticated";
  if (!isAllowed({ type: "user", role: p.role }, entry.permission)) return "forbidden";
  const foreign = p.otherTeam ? team === "demo" : team === "other";
  return foreign ? "not_found" : "ok";
}

// ---------------------------------------------------------------- the tests

test("every server action in the build has a matrix entry, and every entry a registered action", () => {
  const built = registry().map((r) => r.key);
  expect(built.length).toBeGreaterThan(10);
  expect([...built].sort()).toEqual(Object.keys(MATRIX).sort());
});

for (const key of Object.keys(MATRIX)) {
  test(`server action ${key}: every principal × own and other team's resource`, async () => {
    test.setTimeout(240_000);
    const entry = MATRIX[key]!;
    const reg = registry().find((r) => r.key === key);
    expect(reg, `${key} is in the build`).toBeTruthy();
    const succeeded = new Set<string>();
    const seen: string[] = [];
    for (const p of principals) {
      for (const team of ["demo", "other"] as const) {
        // Actions that name no resource act on the caller's own team: there is no "other team's" to try.
        if (entry.crossTeam === "none" && (team === "other" || p.otherTeam)) continue;
        const want = expected(p, entry, team);
        const input = await entry.input(team, p);
        const url = pageUrl(reg!.worker, entry.params?.(input) ?? {});
        const target = entry.target?.(input);
        const before = await snapshot(target);
        const answer = await post(p, reg!, url, input);
        const where = `${p.name} → ${team}'s resource (${url}): HTTP ${answer.status} ${answer.text.slice(0, 300)}`;
        if (want === "ok") {
          expect(answer.status, where).toBe(200);
          expect(answer.result, where).toMatchObject({ ok: true });
          if (!p.otherTeam) succeeded.add(p.role!);
          continue;
        }
        // Refused: either sent to sign-in before the page code ran (no cookie at all), or the action's
        // refusal shape with the expected code. Never a 5xx, never ok.
        seen.push(`${p.name}/${team}: ${answer.status === 200 ? answer.result?.code : answer.status}`);
        if (answer.status === 307 || answer.status === 303) {
          expect(want, where).toBe("unauthenticated");
          expect(answer.location, where).toMatch(/\/signin\b/);
        } else {
          expect(answer.status, where).toBe(200);
          expect(answer.result, where).toMatchObject({ ok: false, code: want });
          expect(typeof answer.result?.message, where).toBe("string");
        }
        expect(answer.setsTeamCookie, where).toBe(false);
        const after = await snapshot(target);
        expect(after.counts, `${where}: row counts`).toEqual(before.counts);
        expect(after.target, `${where}: the targeted row`).toEqual(before.target);
        expect(await auditBy(before.auditId), `${where}: audit rows by a person`).toEqual([]);
      }
    }
    test.info().annotations.push({ type: "refusals", description: seen.join("; ") });
    const roles = (["viewer", "operator", "manager", "admin"] as const).filter((r) =>
      isAllowed({ type: "user", role: r }, entry.permission),
    );
    expect(roles.length, `${key}: some role may use it`).toBeGreaterThan(0);
    expect([...succeeded].sort(), `${key}: succeeded for every allowed role`).toEqual([...roles].sort());
  });
}
