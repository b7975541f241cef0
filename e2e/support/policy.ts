// The team's policy and the agent's gate calls for the approval journeys, through the real API: an operator key
// of the demo admin (policies are written by admins; the seed's operator key belongs to an operator) saves and
// enables a version, and the demo agent asks the gate with the call's arguments.
import { createHash, randomBytes } from "node:crypto";
import { e2e, USERS } from "./env";
import { one } from "./db";
import type { ApiRun } from "./api";

let adminSecret: string | null = null;

/** An operator key of the demo admin, made once per worker (stored as its sha256 hash, like every key). */
async function adminKey(): Promise<string> {
  if (adminSecret) return adminSecret;
  const secret = `qk_operator_${randomBytes(32).toString("base64url")}`;
  await one(
    `INSERT INTO api_keys (id, team_id, user_id, kind, name, scopes, secret_hash)
     SELECT $1, t.id, u.id, 'operator', 'e2e policy admin', '{}', $2 FROM teams t, users u WHERE t.slug = 'demo' AND u.email = $3
     RETURNING id`,
    [`key_e2epolicy${randomBytes(6).toString("hex")}`, createHash("sha256").update(secret).digest("hex"), USERS.admin],
  );
  adminSecret = secret;
  return secret;
}

async function api<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${e2e.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => null)) as T;
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export const adminApi = async <T>(method: string, path: string, body?: unknown) => api<T>(await adminKey(), method, path, body);

/** Saves `doc` as a new version and enables it; returns its number. */
export async function enablePolicy(doc: { rules: unknown[]; redactKeys?: string[]; note?: string }, reason: string): Promise<number> {
  const v = await adminApi<{ version: number }>("POST", "/api/v1/policy/versions", doc);
  await adminApi("PUT", "/api/v1/policy/enabled", { version: v.version, reason });
  return v.version;
}

/** Turns the team's policy off again, so later journeys meet a gate without rules. */
export async function disablePolicy(reason: string): Promise<void> {
  await adminApi("PUT", "/api/v1/policy/enabled", { version: null, reason });
}

export interface GateAnswer {
  decision: string;
  reason: string;
  approvalId?: string;
}

/** The demo agent asks the gate for one call, with its arguments (an approval binds to them). */
export async function ask(run: ApiRun, operationId: string, tool: string, args?: Record<string, unknown>): Promise<GateAnswer> {
  return api<GateAnswer>(e2e.keys().agent!.secret, "POST", "/api/v1/gate", {
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId,
    tool,
    ...(args ? { arguments: args } : {}),
  });
}

/** A root run and a child under it (an approval card shows the tree), registered by the demo agent. */
export async function runTree(title: string): Promise<{ root: ApiRun; child: ApiRun }> {
  const agent = e2e.agent();
  const root = await agent.createRun({ taskId: `${title}-${randomBytes(4).toString("hex")}`, title });
  const child = await agent.createRun({
    taskId: `${title}-child-${randomBytes(4).toString("hex")}`,
    title: `${title} — subagent`,
    parentRunId: root.runId,
    parentLeaseId: root.leaseId,
  });
  return { root, child };
}
