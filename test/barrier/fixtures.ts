// Fixtures for the barrier tests: a team with members of every role, run trees with leases, operations
// in any state, provider rows, and REAL child processes (provider-sim, barrier-worker) of the CLI.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import type { Principal } from "../../lib/platform/auth/principal";
import { ROLES, type Role } from "../../lib/control/types";
import { makeRun, makeTeam as makeBaseTeam, makeUser } from "../support/fixtures";
import { waitFor } from "../../lib/platform/wait";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface TeamFixture {
  teamId: string;
  users: Record<Role, { id: string; email: string; principal: Principal }>;
}

export async function makeTeam(): Promise<TeamFixture> {
  const { teamId } = await makeBaseTeam("Barrier team");
  const users = {} as TeamFixture["users"];
  for (const role of ROLES) {
    const { userId: id, email } = await makeUser(teamId, role);
    users[role] = { id, email, principal: { type: "user", userId: id, email, teamId, role } };
  }
  return { teamId, users };
}

export interface RunNode {
  runId: string;
  leaseId: string;
  epoch: number;
}

/** A root run with `children` child runs, each with a lease that descends from the root lease. */
export async function makeTree(teamId: string, children = 0): Promise<{ root: RunNode; children: RunNode[] }> {
  const root = await makeRun(teamId, { title: "root" });
  const kids: RunNode[] = [];
  for (let i = 0; i < children; i++) kids.push(await makeRun(teamId, { title: `child ${i}` }, root));
  return { root, children: kids };
}

export async function addOp(
  teamId: string,
  run: RunNode,
  o: {
    state: "queued" | "scheduled" | "running" | "succeeded";
    kind?: "call" | "queued" | "scheduled" | "retry";
    providerName?: string;
    providerJobId?: string;
    operationId?: string;
    tool?: string;
  },
): Promise<{ rowId: string; operationId: string }> {
  const rowId = newId("op");
  const operationId = o.operationId ?? `op-${rowId.slice(3, 15)}`;
  await prisma().operation.create({
    data: {
      id: rowId,
      teamId,
      operationId,
      runId: run.runId,
      leaseId: run.leaseId,
      epochStamp: run.epoch,
      kind: o.kind ?? (o.state === "running" ? "call" : o.state === "scheduled" ? "scheduled" : "queued"),
      tool: o.tool ?? "deployment.reserve_preview",
      state: o.state,
      providerName: o.providerName ?? null,
      providerJobId: o.providerJobId ?? null,
      startedAt: o.state === "running" ? new Date() : null,
    },
  });
  return { rowId, operationId };
}

export async function makeProvider(
  teamId: string,
  p: {
    name: string;
    url: string;
    quietPeriodSeconds?: number;
    settleDeadlineMs?: number;
    timeoutMs?: number;
    rollbackOwner?: string | null;
    /** declare the provider's compensation endpoint (recovery) */
    compensate?: boolean;
  },
) {
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId,
      name: p.name,
      kind: "simulated",
      cancelUrl: `${p.url}/jobs/{providerJobId}/cancel`,
      statusUrl: `${p.url}/jobs/{providerJobId}/effect`,
      compensateUrl: p.compensate ? `${p.url}/jobs/{providerJobId}/compensate` : null,
      timeoutMs: p.timeoutMs ?? 5000,
      settleDeadlineMs: p.settleDeadlineMs ?? 3000,
      quietPeriodSeconds: p.quietPeriodSeconds ?? 0,
      rollbackOwner: p.rollbackOwner === undefined ? "release-oncall" : p.rollbackOwner,
    },
  });
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

/** `npm run quiesce -- <args>` as ONE real process (node --import tsx: no wrapper, so SIGKILL kills it). */
export function spawnCli(args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "bin/quiesce.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    out += d;
  });
  return {
    child,
    output: () => out,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}

export { waitFor };

/** The simulated provider as its own process on `port`; resolves when it answers /health. */
export async function startSimProcess(port: number): Promise<Proc & { url: string }> {
  const proc = spawnCli(["provider-sim", "--port", String(port), "--quiet"]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `provider-sim on ${port}`,
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`provider-sim exited: ${proc.output()}`);
      const r = await fetch(`${url}/health`).catch(() => null);
      return r?.ok ?? false;
    },
    60_000,
    200,
  );
  return { ...proc, url };
}

/** A barrier engine process that works only `teamId`'s barriers (test files run side by side on one database). */
export function startWorkerProcess(teamId: string, env: Record<string, string> = {}, id?: string): Proc {
  return spawnCli(["barrier-worker", "--team", teamId, ...(id ? ["--id", id] : [])], { QUIESCE_BARRIER_POLL_MS: "500", ...env });
}

export async function receiptsOf(barrierId: string) {
  return prisma().stopReceipt.findMany({ where: { barrierId }, orderBy: { version: "asc" } });
}
