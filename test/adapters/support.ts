// Shared by the adapter tests: a real API server (test/support/api-server.ts) over the test database,
// a team with agent / gateway / operator keys, and child-process helpers. Every adapter runs as its own
// process, exactly as a harness would start it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { prisma } from "../../lib/platform/db/prisma";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeKey, makeTeam, makeUser } from "../support/fixtures";
import { waitFor } from "../../lib/platform/wait";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const TSX = path.join(ROOT, "node_modules/.bin/tsx");
export const FIXTURES = path.join(ROOT, "test/adapters/fixtures");

export interface World {
  api: ApiServer;
  teamId: string;
  agentKey: string;
  gatewayKey: string;
  operator: QuiesceClient;
  agent: QuiesceClient;
}

export async function makeWorld(): Promise<World> {
  const api = await startApiServer();
  const team = await makeTeam("Adapters");
  const agent = await makeKey(team.teamId, { kind: "agent" });
  const gateway = await makeKey(team.teamId, { kind: "gateway" });
  const op = await makeUser(team.teamId, "operator");
  const opKey = await makeKey(team.teamId, { kind: "operator", userId: op.userId });
  return {
    api,
    teamId: team.teamId,
    agentKey: agent.secret,
    gatewayKey: gateway.secret,
    operator: new QuiesceClient({ url: api.url, apiKey: opKey.secret, timeoutMs: 30_000 }),
    agent: new QuiesceClient({ url: api.url, apiKey: agent.secret, timeoutMs: 30_000 }),
  };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `quiesce-${prefix}-`));
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion with `input` on stdin. */
export function runProcess(cmd: string, args: string[], input: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    // A command that exits without reading stdin (e.g. `node` not found) must not fail the test with EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/** Waits until `probe` returns a truthy value (event-driven tests poll durable state, never sleep-and-assert). */
export function until<T>(
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  what: string,
  limitMs = 60_000,
): Promise<T> {
  return waitFor(what, async () => probe(), limitMs, 100);
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function runRow(runId: string) {
  return prisma().run.findUniqueOrThrow({ where: { id: runId } });
}

export async function opRow(teamId: string, operationId: string) {
  return prisma().operation.findUnique({ where: { teamId_operationId: { teamId, operationId } } });
}
