// createRun's transactional path (a native session or thread, or a fork): one Prisma transaction whose
// steps are the identity checks, the parent and its holder, the lease, and the rows with their audit
// (docs/design/run-registration.md).
import "server-only";
import { prisma, type Tx } from "../../../platform/db/prisma";
import { newId } from "../../../platform/ids";
import { QuiesceError, badRequest, notFound } from "../../../platform/errors";
import {
  DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
  deriveChildLease,
  deriveForkLease,
  leasePath,
  newRootLease,
  type LeaseGrant,
  type LeaseResult,
} from "../../../control/lease";
import { childInitialEpoch } from "../../../control/epoch";
import type { Principal } from "../../../platform/auth/principal";
import type { CreateRunResponse } from "../../../schemas/runs";
import { appendAuditAtCommit } from "../../audit/audit";
import { loadRunChain, lockRunTreeShared } from "../internal/run-facts";
import { isHolder } from "../holder";
import { killedIdentityAnswer, registeredSessionAnswer } from "./identity";
import { createdAnswer, leaseRefusal, leaseTerms, parentLeaseOf, type Registration } from "./registration";

type LeaseRow = NonNullable<Awaited<ReturnType<Tx["lease"]["findUnique"]>>>;
type RunRow = NonNullable<Awaited<ReturnType<Tx["run"]["findUnique"]>>>;

/** The parent the new run goes under, if any: named, named by its lease, or the fork's source. */
interface Parentage {
  parentRunId: string | null;
  parent: RunRow | null;
  /** The lease the caller presented as parentLeaseId (which makes it the parent's holder). */
  parentLease: LeaseRow | null;
  /** The run this one was resumed or forked from: it becomes the parent. */
  forkSourceId: string | null;
}

/** Registers a run with a native identity or a fork source, all in one transaction. */
export function createRunInTransaction(p: Principal, reg: Registration): Promise<CreateRunResponse> {
  return prisma().$transaction(async (tx) => {
    const killed = await killedIdentityAnswer(tx, p, reg);
    if (killed) return killed;
    const parentage = await resolveParent(tx, reg);
    await admitUnderParent(tx, p, reg, parentage);
    const registered = await registeredSessionAnswer(tx, p, reg, parentage.parentRunId);
    if (registered) return registered;
    const now = Date.now();
    const { lease, epoch, parentLease } = await issueLease(tx, reg, parentage, now);
    return insertRun(tx, reg, { ...parentage, parentLease }, lease, epoch, now);
  });
}

/** The parent: a parent lease alone names its run; a resumed or forked session names its source. */
async function resolveParent(tx: Tx, reg: Registration): Promise<Parentage> {
  const { teamId, input, native } = reg;
  let parentRunId = input.parentRunId ?? null;
  let parentLease: LeaseRow | null = null;
  if (input.parentLeaseId) {
    parentLease = await tx.lease.findUnique({ where: { id: input.parentLeaseId } });
    if (!parentLease || parentLease.teamId !== teamId) throw notFound("parent lease");
    if (parentRunId && parentLease.runId !== parentRunId) throw badRequest("parentLeaseId: not a lease of parentRunId");
    parentRunId = parentLease.runId;
  }
  // A resumed or forked session continues its source's work: it becomes the source's child, so the
  // source's kill, pause and breaker reach it (no escape by fork), and the lineage is recorded.
  let forkSourceId: string | null = null;
  const from = input.forkedFrom;
  if (from && !(from.sessionId && !from.runId && !from.threadId && from.sessionId === native.sessionId)) {
    if (input.parentRunId || input.parentLeaseId) throw badRequest("forkedFrom: cannot be combined with parentRunId or parentLeaseId");
    if (!from.runId && !from.sessionId && !from.threadId) throw badRequest("forkedFrom: name a runId, sessionId or threadId");
    const source = from.runId
      ? await tx.run.findUnique({ where: { id: from.runId } })
      : await tx.run.findFirst({
          // The session's own run (no agent) first, else its first run of any agent.
          where: { teamId, ...(from.sessionId ? { nativeSessionId: from.sessionId } : { nativeThreadId: from.threadId! }) },
          orderBy: [{ nativeAgentId: { sort: "asc", nulls: "first" } }, { createdAt: "asc" }],
        });
    if (from.runId && (!source || source.teamId !== teamId)) throw notFound("forkedFrom run");
    // A source this team never registered was never governed: the new run is a root of its own.
    if (source && source.teamId === teamId) {
      forkSourceId = source.id;
      parentRunId = source.id;
    }
  }
  const parent = parentRunId ? await tx.run.findUnique({ where: { id: parentRunId } }) : null;
  if (parentRunId && (!parent || parent.teamId !== teamId)) throw notFound("parent run");
  return { parentRunId, parent, parentLease, forkSourceId };
}

/** Only the parent's holder registers under it, never under a finished parent; then the tree lock. */
async function admitUnderParent(tx: Tx, p: Principal, reg: Registration, { parent, parentLease, forkSourceId }: Parentage): Promise<void> {
  if (!parent) return;
  // A child (or a fork, which becomes the source's child) is registered only by the parent's holder:
  // a key of the parent's tree, or a caller presenting the parent's lease.
  if (!parentLease && !(await isHolder(tx, p, { teamId: reg.teamId, path: parent.path })))
    throw new QuiesceError(
      "forbidden",
      `${forkSourceId ? "forkedFrom" : "parentRunId"}: only the holder of the parent run may register under it (present its lease as parentLeaseId)`,
    );
  if (parent.finishedAt && !forkSourceId) throw new QuiesceError("conflict", "parentRunId: the parent run is finished");
  // Children take the tree lock SHARED: a concurrent kill (exclusive) either sees this child or this
  // registration sees the kill; gate calls on the tree are not blocked.
  await lockRunTreeShared(tx, parent.rootRunId);
}

/** The new run's lease and epoch: a root lease, or derived from the parent's (a fork's is a root lease of its own). */
async function issueLease(
  tx: Tx,
  reg: Registration,
  { parent, parentLease, forkSourceId }: Parentage,
  now: number,
): Promise<{ lease: LeaseGrant; epoch: number; parentLease: LeaseRow | null }> {
  const { teamId, input } = reg;
  const team = await tx.team.findUnique({ where: { id: teamId }, select: { leaseMaxLifetimeSeconds: true } });
  const policy = { maxLifetimeSeconds: team?.leaseMaxLifetimeSeconds ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS };
  if (!parent) {
    const lease = newRootLease(leaseTerms(input), now, policy);
    if (!lease.ok) throw leaseRefusal(lease);
    return { lease: lease.lease, epoch: 1, parentLease };
  }
  const chain = await loadRunChain(tx, teamId, parent.path);
  if (chain.some((r) => r?.lifecycle === "killed")) {
    throw new QuiesceError(
      "conflict",
      forkSourceId ? "forkedFrom: the session this one was resumed or forked from is killed" : "parentRunId: the parent run is killed",
    );
  }
  const epoch = childInitialEpoch(chain.filter((r) => r !== null));
  const from =
    parentLease ??
    (await tx.lease.findFirst({ where: { runId: parent.id, revokedAt: null }, orderBy: { createdAt: "desc" } })) ??
    (await tx.lease.findFirst({ where: { runId: parent.id }, orderBy: { createdAt: "desc" } }));
  if (!from) throw new QuiesceError("conflict", "parentRunId: the parent run holds no lease");
  const derive = forkSourceId ? deriveForkLease : deriveChildLease;
  const lease: LeaseResult = derive(parentLeaseOf(from), leaseTerms(input), now, policy);
  if (!lease.ok) throw leaseRefusal(lease);
  return { lease: lease.lease, epoch, parentLease: from };
}

/** The run, its lease, and the run.register audit row appended (with the notification) at COMMIT. */
async function insertRun(
  tx: Tx,
  reg: Registration,
  { parentRunId, parent, parentLease, forkSourceId }: Parentage,
  lease: LeaseGrant,
  epoch: number,
  now: number,
): Promise<CreateRunResponse> {
  const { teamId, input, native, by } = reg;
  const runId = newId("run");
  const leaseId = newId("lease");
  const run = await tx.run.create({
    data: {
      id: runId,
      teamId,
      taskId: input.taskId,
      parentRunId,
      rootRunId: parent?.rootRunId ?? runId,
      path: [...(parent?.path ?? []), runId],
      depth: parent ? parent.depth + 1 : 0,
      harness: reg.harness,
      nativeSessionId: native.sessionId ?? null,
      nativeAgentId: native.agentId ?? null,
      nativeThreadId: native.threadId ?? null,
      nativeTurnId: native.turnId ?? null,
      title: input.title ?? null,
      epoch,
      createdBy: by.actor,
      holderKeyId: by.holderKeyId,
      forkedFromRunId: forkSourceId,
      // A drill's children are drill runs too, whatever they say (quiesce drill, docs/evals.md).
      isDrill: input.drill === true || parent?.isDrill === true,
    },
  });
  const validUntil = new Date(lease.validUntil);
  await tx.lease.create({
    data: {
      id: leaseId,
      teamId,
      runId,
      parentLeaseId: forkSourceId ? null : (parentLease?.id ?? null),
      // A fork's lease is a root lease (its validity is its own); a child's extends its parent's chain.
      path: leasePath(forkSourceId ? null : (parentLease?.path ?? null), leaseId),
      scopes: lease.scopes,
      validUntil,
      ttlSeconds: lease.ttlSeconds,
      maxValidUntil: new Date(lease.maxValidUntil),
      createdAt: new Date(now),
    },
  });
  // Appended (with the notification) while COMMIT runs: every registration of the team serializes on
  // the team's audit lock, which is then never held across a round trip to this process
  // (docs/design/run-registration.md).
  await appendAuditAtCommit(
    tx,
    {
      teamId,
      actor: by.actor,
      action: "run.register",
      target: runId,
      after: {
        taskId: input.taskId,
        parentRunId,
        ...(forkSourceId ? { forkedFromRunId: forkSourceId } : {}),
        rootRunId: run.rootRunId,
        leaseId,
        scopes: lease.scopes,
        validUntil: validUntil.toISOString(),
        epoch,
        ...(run.isDrill ? { drill: true } : {}),
      },
    },
    { kind: "run", teamId, rootRunId: run.rootRunId, runIds: [runId] },
  );
  return createdAnswer({ runId, leaseId, epoch, parentRunId, rootRunId: run.rootRunId }, lease);
}
