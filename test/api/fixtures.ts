// A world for API tests: the real route handlers over real HTTP (startApiServer), a real database,
// two teams, users per role and one key of each kind created through lib/modules/keys/api-keys (hashed at rest).
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import type { Principal } from "../../lib/platform/auth/principal";
import type { KeyKind } from "../../lib/control/types";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeTeam as makeBaseTeam, makeUser } from "../support/fixtures";

const SYSTEM: Principal = { type: "system", name: "test" };

export interface TestTeam {
  teamId: string;
  users: Record<"admin" | "operator" | "viewer", string>;
  keys: Record<"agent" | "worker" | "gateway" | "operator" | "admin" | "viewerOperator", string>;
  keyIds: Record<string, string>;
}

export async function makeTeam(label: string): Promise<TestTeam> {
  const { teamId } = await makeBaseTeam(label);
  const users = {} as TestTeam["users"];
  for (const role of ["admin", "operator", "viewer"] as const) users[role] = (await makeUser(teamId, role)).userId;
  const keys = {} as TestTeam["keys"];
  const keyIds: Record<string, string> = {};
  const specs: [keyof TestTeam["keys"], KeyKind, string | undefined][] = [
    ["agent", "agent", undefined],
    ["worker", "worker", undefined],
    ["gateway", "gateway", undefined],
    ["operator", "operator", users.operator],
    ["admin", "operator", users.admin],
    ["viewerOperator", "operator", users.viewer],
  ];
  for (const [name, kind, userId] of specs) {
    const k = await createApiKey(SYSTEM, { teamId, kind, name, userId });
    keys[name] = k.secret;
    keyIds[name] = k.id;
  }
  return { teamId, users, keys, keyIds };
}

export interface World {
  server: ApiServer;
  a: TestTeam;
  b: TestTeam;
  client(secret?: string): QuiesceClient;
  close(): Promise<void>;
}

export async function makeWorld(): Promise<World> {
  const server = await startApiServer();
  const [a, b] = [await makeTeam("alpha"), await makeTeam("beta")];
  return {
    server,
    a,
    b,
    client: (secret) => new QuiesceClient({ url: server.url, apiKey: secret ?? "", timeoutMs: 20_000 }),
    close: async () => {
      await server.close();
      await prisma().$disconnect();
      await closePool();
    },
  };
}

/** Raw HTTP for what the typed client refuses to send (bad bodies, missing auth). */
export async function raw(url: string, method: string, path: string, opts: { key?: string | null; body?: unknown; rawBody?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(url + path, {
    method,
    headers,
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let json: any = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text };
}

/**
 * Opens a run's event stream at `base`, reads its first chunk while the stream stays open, and closes
 * it: the status, content type and that chunk, for tests that a stream really streams.
 */
export async function firstEventChunk(base: string, runId: string, key: string) {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` }, signal: ac.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  ac.abort();
  await reader.cancel().catch(() => {});
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    done: first.done,
    text: new TextDecoder().decode(first.value),
  };
}

/** Everything a control write could touch, to prove a refused request changed nothing. */
export async function snapshot(teamId: string) {
  const [runs, leases, operations, audit, receipts] = await Promise.all([
    prisma().run.findMany({ where: { teamId }, orderBy: { id: "asc" } }),
    prisma().lease.findMany({ where: { teamId }, orderBy: { id: "asc" } }),
    prisma().operation.findMany({ where: { teamId }, orderBy: { id: "asc" } }),
    prisma().auditEvent.count({ where: { teamId } }),
    prisma().effectReceipt.count({ where: { teamId } }),
  ]);
  return JSON.parse(JSON.stringify({ runs, leases, operations, audit, receipts }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
}
