// Test fixtures for anything that needs control state in the real database: a team, users with roles,
// API keys (with their secret), run trees of any depth with their leases, and operations. Rows are
// written directly with prisma() (not through lib/modules) so tests can build states the API would refuse
// to create — a killed parent with a normal child, an expired ancestor lease, a half-open breaker.
// Reusable by every helper: import from "test/support/fixtures".
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { hashKeySecret, newKeySecret } from "../../lib/platform/auth/api-key";
import type { BreakerState, KeyKind, Lifecycle, OperationKind, OperationState, Role } from "../../lib/control/types";
import { isFinishedOperation } from "../../lib/control/types";

export interface FixtureTeam {
  teamId: string;
  slug: string;
}
export interface FixtureKey {
  keyId: string;
  secret: string;
  hash: string;
  teamId: string;
}

export interface RunSpec {
  lifecycle?: Lifecycle;
  breaker?: BreakerState;
  breakerChangedAt?: Date;
  breakerProbeOpId?: string | null;
  breakerFailures?: number;
  /** defaults to the parent's epoch (as the runs API creates children), else 1 */
  epoch?: number;
  title?: string;
  lease?: { validUntil?: Date; revokedAt?: Date | null; scopes?: string[] };
  /** The key that holds the run (registered it); defaults to the parent's holder, else none. */
  holderKeyId?: string | null;
}

export interface FixtureRun {
  runId: string;
  leaseId: string;
  teamId: string;
  rootRunId: string;
  parentRunId: string | null;
  path: string[];
  leasePath: string[];
  depth: number;
  epoch: number;
  holderKeyId?: string | null;
}

export async function makeTeam(name = "Fixture team"): Promise<FixtureTeam> {
  const teamId = newId("team");
  const slug = `t-${teamId
    .slice(5)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")}`;
  await prisma().team.create({ data: { id: teamId, slug, name } });
  return { teamId, slug };
}

export async function makeUser(teamId: string, role: Role): Promise<{ userId: string; email: string }> {
  const userId = newId("user");
  const email = `${userId.toLowerCase()}@fixture.test`;
  await prisma().user.create({ data: { id: userId, email, name: `Fixture ${role}` } });
  await prisma().membership.create({ data: { id: newId("mem"), teamId, userId, role } });
  return { userId, email };
}

export async function makeKey(
  teamId: string,
  opts: { kind?: KeyKind; scopes?: string[]; userId?: string | null; expiresAt?: Date | null; revokedAt?: Date | null } = {},
): Promise<FixtureKey> {
  const kind = opts.kind ?? "agent";
  const secret = newKeySecret(kind);
  const hash = hashKeySecret(secret);
  const keyId = newId("key");
  await prisma().apiKey.create({
    data: {
      id: keyId,
      teamId,
      kind,
      name: `fixture ${kind}`,
      scopes: opts.scopes ?? [],
      secretHash: hash,
      userId: opts.userId ?? null,
      expiresAt: opts.expiresAt ?? null,
      revokedAt: opts.revokedAt ?? null,
    },
  });
  return { keyId, secret, hash, teamId };
}

const HOUR = 3600_000;

/** One run with its lease, under `parent` (or a root). Lease defaults: valid one hour, scopes ["*"]. */
export async function makeRun(teamId: string, spec: RunSpec = {}, parent?: FixtureRun): Promise<FixtureRun> {
  const runId = newId("run");
  const leaseId = newId("lease");
  const path = [...(parent?.path ?? []), runId];
  const leasePath = [...(parent?.leasePath ?? []), leaseId];
  const epoch = spec.epoch ?? parent?.epoch ?? 1;
  const rootRunId = parent?.rootRunId ?? runId;
  const now = new Date();
  await prisma().run.create({
    data: {
      id: runId,
      teamId,
      taskId: `task-${runId}`,
      parentRunId: parent?.runId ?? null,
      rootRunId,
      path,
      depth: path.length - 1,
      title: spec.title ?? null,
      lifecycle: spec.lifecycle ?? "normal",
      breaker: spec.breaker ?? "closed",
      breakerChangedAt: spec.breakerChangedAt ?? now,
      breakerProbeOpId: spec.breakerProbeOpId ?? null,
      breakerFailures: spec.breakerFailures ?? 0,
      epoch,
      holderKeyId: spec.holderKeyId === undefined ? (parent?.holderKeyId ?? null) : spec.holderKeyId,
    },
  });
  await prisma().lease.create({
    data: {
      id: leaseId,
      teamId,
      runId,
      parentLeaseId: parent?.leaseId ?? null,
      path: leasePath,
      scopes: spec.lease?.scopes ?? ["*"],
      validUntil: spec.lease?.validUntil ?? new Date(now.getTime() + HOUR),
      revokedAt: spec.lease?.revokedAt ?? null,
      revokedBy: spec.lease?.revokedAt ? "fixture" : null,
    },
  });
  return {
    runId,
    leaseId,
    teamId,
    rootRunId,
    parentRunId: parent?.runId ?? null,
    path,
    leasePath,
    depth: path.length - 1,
    epoch,
    holderKeyId: spec.holderKeyId === undefined ? (parent?.holderKeyId ?? null) : spec.holderKeyId,
  };
}

/** A chain root → … → leaf, one spec per level (root first). Returns the runs root first. */
export async function makeChain(teamId: string, specs: RunSpec[]): Promise<FixtureRun[]> {
  const out: FixtureRun[] = [];
  for (const s of specs) out.push(await makeRun(teamId, s, out[out.length - 1]));
  return out;
}

export interface OperationSpec {
  operationId?: string;
  state: OperationState;
  kind?: OperationKind;
  stateReason?: string | null;
  expiresAt?: Date | null;
  notBefore?: Date | null;
  epochStamp?: number;
  tool?: string;
  outcomeDetail?: unknown;
  leaseId?: string | null;
}

export async function makeOperation(run: FixtureRun, spec: OperationSpec): Promise<{ id: string; operationId: string }> {
  const id = newId("op");
  const operationId = spec.operationId ?? `opk-${id}`;
  const finished = isFinishedOperation(spec.state);
  await prisma().operation.create({
    data: {
      id,
      teamId: run.teamId,
      operationId,
      runId: run.runId,
      leaseId: spec.leaseId === undefined ? run.leaseId : spec.leaseId,
      epochStamp: spec.epochStamp ?? run.epoch,
      kind: spec.kind ?? (spec.state === "queued" || spec.state === "scheduled" ? spec.state : "call"),
      tool: spec.tool ?? "fixture.tool",
      state: spec.state,
      stateReason: spec.stateReason ?? null,
      expiresAt: spec.expiresAt ?? null,
      notBefore: spec.notBefore ?? null,
      outcomeDetail: spec.outcomeDetail === undefined ? undefined : (spec.outcomeDetail as object),
      startedAt: spec.state === "running" || finished ? new Date() : null,
      finishedAt: finished ? new Date() : null,
    },
  });
  return { id, operationId };
}

/** A team, an agent key and a chain of `depth` normal runs: the usual starting point. */
export async function makeGateWorld(depth = 1, keyKind: KeyKind = "agent") {
  const team = await makeTeam();
  const key = await makeKey(team.teamId, { kind: keyKind });
  // The world's key registered the runs: it is their holder.
  const chain = await makeChain(
    team.teamId,
    Array.from({ length: depth }, () => ({ holderKeyId: key.keyId })),
  );
  return { team, key, chain, leaf: chain[chain.length - 1]! };
}

let counter = 0;
/** A fresh caller idempotency key. */
export function opKey(label = "op"): string {
  counter += 1;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}
