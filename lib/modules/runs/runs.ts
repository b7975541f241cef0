// Runs and child runs (docs/architecture.md#, #the-wire-contract): registration with its lease, reads, lists.
// Registration is idempotent on the harness's native identity (session + agent + parent), because
// harness hooks run as fresh processes and may register the same session more than once.
import "server-only";
import type pg from "pg";
import { prisma, type Tx } from "../../platform/db/prisma";
import { pool, preparedName } from "../../platform/db/pool";
import { newId } from "../../platform/ids";
import { QuiesceError, badRequest, notFound } from "../../platform/errors";
import {
  DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
  deriveChildLease,
  deriveForkLease,
  leasePath,
  newRootLease,
  type LeaseResult,
} from "../../control/lease";
import { childInitialEpoch } from "../../control/epoch";
import type { Harness } from "../../control/types";
import type { CreateRunBody, CreateRunResponse, ListRunsQuery, ListRunsResponse, RunView } from "../../schemas/runs";
import { appendAudit, appendAuditAtCommit } from "../audit/audit";
import { controlPayload } from "../../platform/db/notify";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { assertTeam, authorize } from "../../platform/auth/authorize";
import { loadRunChain, lockRunTreeShared } from "./internal/run-facts";
import { runSearchWhere } from "./internal/run-search";
import { insertColumns, type LeaseField, type RunField } from "../../platform/db/insert-columns";
import { isHolder } from "./holder";
import { runState, runSummary, type SummaryRow } from "./internal/read-shapes";

type RunRow = Awaited<ReturnType<ReturnType<typeof prisma>["run"]["findUniqueOrThrow"]>>;

function teamFor(p: Principal, explicit?: string): string {
  if (p.type !== "system") return p.teamId;
  if (!explicit) throw badRequest("teamId: required for system callers");
  return explicit;
}

function leaseRefusal(r: Extract<LeaseResult, { ok: false }>): QuiesceError {
  const msg = `${r.field ?? "lease"}: ${r.message}`;
  if (r.code === "bad_ttl" || r.code === "bad_scope") return new QuiesceError("bad_request", msg);
  if (r.code === "scope_not_held") return new QuiesceError("forbidden", msg);
  return new QuiesceError("conflict", msg);
}

async function existingRegistration(tx: Tx, run: RunRow): Promise<CreateRunResponse> {
  const lease = await tx.lease.findFirst({ where: { runId: run.id }, orderBy: { createdAt: "desc" } });
  if (!lease) throw new QuiesceError("internal", "run has no lease");
  return {
    runId: run.id,
    leaseId: lease.id,
    epoch: run.epoch,
    validUntil: lease.validUntil.toISOString(),
    parentRunId: run.parentRunId,
    rootRunId: run.rootRunId,
    scopes: lease.scopes,
    created: false,
  };
}

/**
 * The first run carrying one of the registration's native identities (its session or thread, or the
 * one it says it was forked from) whose tree is killed. `forked`: it was named only by forkedFrom.
 */
async function killedIdentityTx(
  tx: Tx,
  teamId: string,
  native: NonNullable<CreateRunBody["native"]>,
  from: CreateRunBody["forkedFrom"],
): Promise<{ runId: string; forked: boolean } | null> {
  const rows = await tx.$queryRawUnsafe<{ id: string; s: string | null; t: string | null }[]>(
    `SELECT r.id, r.native_session_id AS s, r.native_thread_id AS t FROM runs r
      WHERE r.team_id = $1
        AND (r.native_session_id = ANY (ARRAY[$2, $4]::text[]) OR r.native_thread_id = ANY (ARRAY[$3, $5]::text[]))
        AND EXISTS (SELECT 1 FROM runs a WHERE a.id = ANY (r.path) AND a.lifecycle = 'killed')
      ORDER BY r.created_at, r.id LIMIT 1`,
    teamId,
    native.sessionId ?? null,
    native.threadId ?? null,
    from?.sessionId ?? null,
    from?.threadId ?? null,
  );
  const r = rows[0];
  if (!r) return null;
  const own = (native.sessionId != null && r.s === native.sessionId) || (native.threadId != null && r.t === native.threadId);
  return { runId: r.id, forked: !own };
}

/** Registers a run (or a child run under parentRunId / parentLeaseId) and issues its lease. */
export async function createRun(p: Principal, input: CreateRunBody & { teamId?: string }): Promise<CreateRunResponse> {
  authorize(p, "run.register");
  const teamId = teamFor(p, input.teamId);
  const harness = (input.harness === "claude-code" ? "claude_code" : (input.harness ?? "custom")) as Harness;
  const native = input.native ?? {};
  const actor = actorOf(p);
  const holderKeyId = p.type === "key" ? p.keyId : null;
  const by = { actor, holderKeyId, system: p.type === "system" };
  // Without a native session, thread or a fork (the common case) there is no identity lookup: roots and
  // children are registered on the raw pool in few round trips (createRootRun, createChildRun).
  if (!input.forkedFrom && !native.sessionId && !native.threadId)
    return input.parentRunId || input.parentLeaseId
      ? createChildRun(teamId, by, harness, input, native)
      : createRootRun(teamId, by, harness, input, native);

  return prisma().$transaction(async (tx) => {
    // No resurrection: a killed run's session or thread resolves to that run whatever agent or parent
    // this registration names, and no fork of it is registered.
    const identities = [
      ...new Set([native.sessionId, native.threadId, input.forkedFrom?.sessionId, input.forkedFrom?.threadId].filter(Boolean)),
    ].sort() as string[];
    if (identities.length > 0) {
      // Registrations naming the same identity go one at a time (sorted keys: no deadlock between them).
      for (const id of identities)
        await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 2))", `identity:${teamId}:${id}`);
      const killed = await killedIdentityTx(tx, teamId, native, input.forkedFrom);
      if (killed) {
        if (killed.forked)
          throw new QuiesceError("conflict", "forkedFrom: the session or thread this one comes from belongs to a killed run");
        const run = await tx.run.findUniqueOrThrow({ where: { id: killed.runId } });
        if (!(await isHolder(tx, p, { teamId, path: run.path })))
          throw new QuiesceError("conflict", "native session or thread belongs to a killed run held by another key");
        return existingRegistration(tx, run);
      }
    }
    // Resolve the parent (a parent lease alone names its run).
    let parentRunId = input.parentRunId ?? null;
    let parentLease = null as null | {
      id: string;
      runId: string;
      teamId: string;
      path: string[];
      scopes: string[];
      validUntil: Date;
      maxValidUntil: Date | null;
      revokedAt: Date | null;
    };
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
    // A child (or a fork, which becomes the source's child) is registered only by the parent's holder:
    // a key of the parent's tree, or a caller presenting the parent's lease.
    if (parent && !parentLease && !(await isHolder(tx, p, { teamId, path: parent.path })))
      throw new QuiesceError(
        "forbidden",
        `${forkSourceId ? "forkedFrom" : "parentRunId"}: only the holder of the parent run may register under it (present its lease as parentLeaseId)`,
      );
    if (parent && parent.finishedAt && !forkSourceId) throw new QuiesceError("conflict", "parentRunId: the parent run is finished");
    // Children take the tree lock SHARED: a concurrent kill (exclusive) either sees this child or this
    // registration sees the kill; gate calls on the tree are not blocked.
    if (parent) await lockRunTreeShared(tx, parent.rootRunId);

    if (native.sessionId) {
      const key = `native:${teamId}:${native.sessionId}:${native.agentId ?? ""}:${parentRunId ?? ""}`;
      await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 2))", key);
      // A finished run's session registering again is a new run (its harness resumed it): finished is final.
      const existing = await tx.run.findFirst({
        where: { teamId, nativeSessionId: native.sessionId, nativeAgentId: native.agentId ?? null, parentRunId, finishedAt: null },
        orderBy: { createdAt: "asc" },
      });
      if (existing) {
        // The registration answers with the run's lease: only to its holder.
        if (!(await isHolder(tx, p, { teamId, path: existing.path })))
          throw new QuiesceError("conflict", "native session: already registered by another key (only its holder may register it again)");
        // A harness re-registers its session at each new turn: the run keeps its newest native turn
        // id, and every turn it announced stays in the audit trail.
        if (native.turnId && existing.nativeTurnId !== native.turnId) {
          await tx.run.update({ where: { id: existing.id }, data: { nativeTurnId: native.turnId } });
          await appendAudit(tx, {
            teamId,
            actor,
            action: "run.native_turn",
            target: existing.id,
            before: { turnId: existing.nativeTurnId },
            after: { turnId: native.turnId },
          });
        }
        return existingRegistration(tx, existing);
      }
    }

    const now = Date.now();
    const team = await tx.team.findUnique({ where: { id: teamId }, select: { leaseMaxLifetimeSeconds: true } });
    const policy = { maxLifetimeSeconds: team?.leaseMaxLifetimeSeconds ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS };
    const runId = newId("run");
    const leaseId = newId("lease");
    let lease: LeaseResult;
    let epoch = 1;
    if (parent) {
      const chain = await loadRunChain(tx, teamId, parent.path);
      if (chain.some((r) => r?.lifecycle === "killed")) {
        throw new QuiesceError(
          "conflict",
          forkSourceId ? "forkedFrom: the session this one was resumed or forked from is killed" : "parentRunId: the parent run is killed",
        );
      }
      epoch = childInitialEpoch(chain.filter((r) => r !== null));
      parentLease ??=
        (await tx.lease.findFirst({ where: { runId: parent.id, revokedAt: null }, orderBy: { createdAt: "desc" } })) ??
        (await tx.lease.findFirst({ where: { runId: parent.id }, orderBy: { createdAt: "desc" } }));
      if (!parentLease) throw new QuiesceError("conflict", "parentRunId: the parent run holds no lease");
      const derive = forkSourceId ? deriveForkLease : deriveChildLease;
      lease = derive(
        {
          id: parentLease.id,
          path: parentLease.path,
          scopes: parentLease.scopes,
          validUntil: parentLease.validUntil.getTime(),
          maxValidUntil: parentLease.maxValidUntil?.getTime() ?? null,
          revokedAt: parentLease.revokedAt?.getTime() ?? null,
        },
        { scopes: input.scopes, ttlSeconds: input.leaseTtlSeconds },
        now,
        policy,
      );
    } else {
      lease = newRootLease({ scopes: input.scopes, ttlSeconds: input.leaseTtlSeconds }, now, policy);
    }
    if (!lease.ok) throw leaseRefusal(lease);

    const run = await tx.run.create({
      data: {
        id: runId,
        teamId,
        taskId: input.taskId,
        parentRunId,
        rootRunId: parent?.rootRunId ?? runId,
        path: [...(parent?.path ?? []), runId],
        depth: parent ? parent.depth + 1 : 0,
        harness,
        nativeSessionId: native.sessionId ?? null,
        nativeAgentId: native.agentId ?? null,
        nativeThreadId: native.threadId ?? null,
        nativeTurnId: native.turnId ?? null,
        title: input.title ?? null,
        epoch,
        createdBy: actor,
        holderKeyId,
        forkedFromRunId: forkSourceId,
        // A drill's children are drill runs too, whatever they say (quiesce drill, docs/evals.md).
        isDrill: input.drill === true || parent?.isDrill === true,
      },
    });
    const validUntil = new Date(lease.lease.validUntil);
    await tx.lease.create({
      data: {
        id: leaseId,
        teamId,
        runId,
        parentLeaseId: forkSourceId ? null : (parentLease?.id ?? null),
        // A fork's lease is a root lease (its validity is its own); a child's extends its parent's chain.
        path: leasePath(forkSourceId ? null : (parentLease?.path ?? null), leaseId),
        scopes: lease.lease.scopes,
        validUntil,
        ttlSeconds: lease.lease.ttlSeconds,
        maxValidUntil: new Date(lease.lease.maxValidUntil),
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
        actor,
        action: "run.register",
        target: runId,
        after: {
          taskId: input.taskId,
          parentRunId,
          ...(forkSourceId ? { forkedFromRunId: forkSourceId } : {}),
          rootRunId: run.rootRunId,
          leaseId,
          scopes: lease.lease.scopes,
          validUntil: validUntil.toISOString(),
          epoch,
          ...(run.isDrill ? { drill: true } : {}),
        },
      },
      { kind: "run", teamId, rootRunId: run.rootRunId, runIds: [runId] },
    );
    return {
      runId,
      leaseId,
      epoch,
      validUntil: validUntil.toISOString(),
      parentRunId,
      rootRunId: run.rootRunId,
      scopes: lease.lease.scopes,
      created: true,
    };
  });
}

type Queryable = Pick<pg.PoolClient, "query">;

// insertRegistration's statement. Every column of runs and leases is named once, here (the type lists
// them all: a column added to schema.prisma fails to compile until it is given a value or DEFAULT).
const RUN_INSERT = insertColumns<RunField>({
  id: "$1",
  teamId: "$2",
  taskId: "$3",
  parentRunId: "$4",
  rootRunId: "$5",
  path: "$6::text[]",
  depth: "$7",
  harness: '$8::"Harness"',
  nativeSessionId: "NULL",
  nativeAgentId: "$9",
  nativeThreadId: "$10",
  nativeTurnId: "$11",
  title: "$12",
  isDrill: "$15",
  lifecycle: "DEFAULT",
  lifecycleChangedAt: "DEFAULT",
  lifecycleChangedBy: "DEFAULT",
  lifecycleReason: "DEFAULT",
  breaker: "DEFAULT",
  breakerChangedAt: "DEFAULT",
  breakerChangedBy: "DEFAULT",
  breakerReason: "DEFAULT",
  breakerFailures: "DEFAULT",
  breakerProbeOpId: "DEFAULT",
  breakerHeld: "DEFAULT",
  epoch: "$13",
  lastHeartbeatAt: "DEFAULT",
  lastNativeState: "DEFAULT",
  createdBy: "$14",
  holderKeyId: "$26",
  createdAt: "DEFAULT",
  forkedFromRunId: "NULL",
  finishedAt: "DEFAULT",
});
const LEASE_INSERT = insertColumns<LeaseField>({
  id: "$16",
  teamId: "$2",
  runId: "r.id",
  parentLeaseId: "$17",
  path: "$18::text[]",
  scopes: "$19::text[]",
  validUntil: "$20",
  ttlSeconds: "$21",
  maxValidUntil: "$22",
  revokedAt: "DEFAULT",
  revokedBy: "DEFAULT",
  createdAt: "$23",
});
const REGISTER_RUN_SQL = `WITH r AS (
    INSERT INTO runs (${RUN_INSERT.columns}) VALUES (${RUN_INSERT.values})
    RETURNING id),
  l AS (
    INSERT INTO leases (${LEASE_INSERT.columns}) SELECT ${LEASE_INSERT.values} FROM r
    RETURNING id)
  INSERT INTO audit_intents (team_id, actor, action, target, before, after, notify)
  SELECT $2, $14, 'run.register', $1, NULL, $24::jsonb, $25 FROM l`;

/** The run, its lease and the run.register audit intent (appended with its notification at COMMIT). */
async function insertRegistration(
  db: Queryable,
  r: {
    runId: string;
    leaseId: string;
    teamId: string;
    actor: string;
    holderKeyId: string | null;
    harness: Harness;
    input: CreateRunBody;
    native: NonNullable<CreateRunBody["native"]>;
    parent: { runId: string; rootRunId: string; path: string[]; depth: number; isDrill: boolean } | null;
    parentLease: { id: string; path: string[] } | null;
    lease: Extract<LeaseResult, { ok: true }>["lease"];
    epoch: number;
    now: number;
  },
): Promise<CreateRunResponse> {
  const rootRunId = r.parent?.rootRunId ?? r.runId;
  const parentRunId = r.parent?.runId ?? null;
  const validUntil = new Date(r.lease.validUntil);
  const isDrill = r.input.drill === true || r.parent?.isDrill === true;
  const after = {
    taskId: r.input.taskId,
    parentRunId,
    rootRunId,
    leaseId: r.leaseId,
    scopes: r.lease.scopes,
    validUntil: validUntil.toISOString(),
    epoch: r.epoch,
    ...(isDrill ? { drill: true } : {}),
  };
  await db.query({
    ...preparedName("quiesce_register_run"),
    text: REGISTER_RUN_SQL,
    values: [
      r.runId,
      r.teamId,
      r.input.taskId,
      parentRunId,
      rootRunId,
      [...(r.parent?.path ?? []), r.runId],
      r.parent ? r.parent.depth + 1 : 0,
      r.harness,
      r.native.agentId ?? null,
      r.native.threadId ?? null,
      r.native.turnId ?? null,
      r.input.title ?? null,
      r.epoch,
      r.actor,
      isDrill,
      r.leaseId,
      r.parentLease?.id ?? null,
      leasePath(r.parentLease?.path ?? null, r.leaseId),
      r.lease.scopes,
      validUntil,
      r.lease.ttlSeconds,
      new Date(r.lease.maxValidUntil),
      new Date(r.now),
      JSON.stringify(after),
      controlPayload({ kind: "run", teamId: r.teamId, rootRunId, runIds: [r.runId] }),
      r.holderKeyId,
    ],
  });
  return {
    runId: r.runId,
    leaseId: r.leaseId,
    epoch: r.epoch,
    validUntil: validUntil.toISOString(),
    parentRunId,
    rootRunId,
    scopes: r.lease.scopes,
    created: true,
  };
}

/**
 * createRun's plain root path (no parent, fork or native session) in two round trips on the raw pool,
 * no Prisma and no interactive transaction: the team's lease policy, then ONE statement that inserts the
 * run and its lease and records the run.register audit intent (appended, with the control notification,
 * while the statement's transaction commits: appendAuditAtCommit). Same rows, audit and answer as the
 * transactional path (test/api/runs.test.ts compares them).
 */
/** Who registers: the audit actor, the key that will hold the run, and whether it is the trusted system. */
interface Registrant {
  actor: string;
  holderKeyId: string | null;
  system: boolean;
}

async function createRootRun(
  teamId: string,
  by: Registrant,
  harness: Harness,
  input: CreateRunBody,
  native: NonNullable<CreateRunBody["native"]>,
): Promise<CreateRunResponse> {
  const now = Date.now();
  const team = await pool().query<{ s: number | null }>({
    ...preparedName("quiesce_team_lease_policy"),
    text: "SELECT lease_max_lifetime_seconds AS s FROM teams WHERE id = $1",
    values: [teamId],
  });
  const lease = newRootLease({ scopes: input.scopes, ttlSeconds: input.leaseTtlSeconds }, now, {
    maxLifetimeSeconds: team.rows[0]?.s ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
  });
  if (!lease.ok) throw leaseRefusal(lease);
  return insertRegistration(pool(), {
    runId: newId("run"),
    leaseId: newId("lease"),
    teamId,
    actor: by.actor,
    holderKeyId: by.holderKeyId,
    harness,
    input,
    native,
    parent: null,
    parentLease: null,
    lease: lease.lease,
    epoch: 1,
    now,
  });
}

/**
 * createRun's child path (a parent run or lease; no fork, no native session) as one transaction on the
 * raw pool in five round trips (Prisma's took about twelve): resolve the parent and take its tree's lock
 * SHARED (the parent's root, path and depth never change, so reading them before the lock is safe); then,
 * with a snapshot taken after the lock, the ancestry's kill state and epochs, the parent lease and the
 * team's policy; then the rows. The same checks and answers as the transactional path.
 */
async function createChildRun(
  teamId: string,
  by: Registrant,
  harness: Harness,
  input: CreateRunBody,
  native: NonNullable<CreateRunBody["native"]>,
): Promise<CreateRunResponse> {
  const db = await pool().connect();
  let open = false;
  try {
    // The statements below are lookups by key; their plans are cached per connection, and one made while
    // the tables were small must not be a sequential scan once they have grown (docs/gate.md#plans).
    // Same round trip as the BEGIN (simple protocol), and only for this transaction.
    await db.query("BEGIN; SET LOCAL enable_seqscan = off");
    open = true;
    const found = (
      await db.query<{
        pl_id: string | null;
        pl_team: string | null;
        pl_run: string | null;
        id: string | null;
        team_id: string | null;
        root_run_id: string | null;
        path: string[] | null;
        depth: number | null;
        is_drill: boolean | null;
        holds: boolean | null;
        finished: boolean | null;
        locked: string | null;
      }>({
        ...preparedName("quiesce_child_parent"),
        // holds: a run of the parent's path is held by this key (runs by primary key, as below).
        text: `SELECT pl.id AS pl_id, pl.team_id AS pl_team, pl.run_id AS pl_run,
                      r.id, r.team_id, r.root_run_id, r.path, r.depth, r.is_drill, r.finished_at IS NOT NULL AS finished,
                      EXISTS (SELECT 1 FROM runs h WHERE h.id = ANY (r.path) AND h.team_id IS NOT DISTINCT FROM $3
                                 AND h.holder_key_id = $4) AS holds,
                      CASE WHEN r.team_id = $3 THEN pg_advisory_xact_lock_shared(hashtextextended(r.root_run_id, 0))::text END AS locked
                 FROM (SELECT $1::text AS run_id, $2::text AS lease_id) q
                 LEFT JOIN leases pl ON pl.id = q.lease_id
                 LEFT JOIN runs r ON r.id = CASE WHEN q.lease_id IS NOT NULL AND pl.team_id = $3 THEN pl.run_id ELSE q.run_id END`,
        values: [input.parentRunId ?? null, input.parentLeaseId ?? null, teamId, by.holderKeyId],
      })
    ).rows[0]!;
    if (input.parentLeaseId) {
      if (!found.pl_id || found.pl_team !== teamId) throw notFound("parent lease");
      if (input.parentRunId && found.pl_run !== input.parentRunId) throw badRequest("parentLeaseId: not a lease of parentRunId");
    }
    if (!found.id || found.team_id !== teamId) throw notFound("parent run");
    // Same team is not enough: a child is registered by the parent's holder or with the parent's lease.
    if (!input.parentLeaseId && !by.system && !found.holds)
      throw new QuiesceError(
        "forbidden",
        "parentRunId: only the holder of the parent run may register under it (present its lease as parentLeaseId)",
      );
    if (found.finished) throw new QuiesceError("conflict", "parentRunId: the parent run is finished");
    const parent = { runId: found.id, rootRunId: found.root_run_id!, path: found.path!, depth: found.depth!, isDrill: found.is_drill! };
    const facts = (
      await db.query<{
        killed: boolean;
        epochs: number[] | null;
        policy: number | null;
        id: string | null;
        path: string[] | null;
        scopes: string[] | null;
        valid_until: Date | null;
        max_valid_until: Date | null;
        revoked_at: Date | null;
      }>({
        ...preparedName("quiesce_child_facts"),
        // The ancestry by primary key only: its team is a filter (IS NOT DISTINCT FROM is not an index
        // condition), so a plan cannot walk one of the team-leading indexes instead. The parent lease by id
        // or, without one, the parent run's newest live lease: two branches, each with its own index.
        text: `SELECT (SELECT coalesce(bool_or(c.lifecycle = 'killed'), false) FROM runs c
                        WHERE c.id = ANY ($1::text[]) AND c.team_id IS NOT DISTINCT FROM $2) AS killed,
                      (SELECT array_agg(c.epoch) FROM runs c WHERE c.id = ANY ($1::text[]) AND c.team_id IS NOT DISTINCT FROM $2) AS epochs,
                      (SELECT t.lease_max_lifetime_seconds FROM teams t WHERE t.id = $2) AS policy,
                      pl.id, pl.path, pl.scopes, pl.valid_until, pl.max_valid_until, pl.revoked_at
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL (
                      SELECT l.* FROM leases l WHERE $3::text IS NOT NULL AND l.id = $3
                      UNION ALL
                      (SELECT l.* FROM leases l WHERE $3::text IS NULL AND l.run_id = $4
                        ORDER BY (l.revoked_at IS NULL) DESC, l.created_at DESC LIMIT 1)
                      LIMIT 1) pl ON true`,
        values: [parent.path, teamId, found.pl_id, parent.runId],
      })
    ).rows[0]!;
    if (facts.killed) throw new QuiesceError("conflict", "parentRunId: the parent run is killed");
    const epoch = childInitialEpoch((facts.epochs ?? []).map((e) => ({ epoch: e })));
    if (!facts.id) throw new QuiesceError("conflict", "parentRunId: the parent run holds no lease");
    const now = Date.now();
    const lease = deriveChildLease(
      {
        id: facts.id,
        path: facts.path!,
        scopes: facts.scopes!,
        validUntil: facts.valid_until!.getTime(),
        maxValidUntil: facts.max_valid_until?.getTime() ?? null,
        revokedAt: facts.revoked_at?.getTime() ?? null,
      },
      { scopes: input.scopes, ttlSeconds: input.leaseTtlSeconds },
      now,
      { maxLifetimeSeconds: facts.policy ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS },
    );
    if (!lease.ok) throw leaseRefusal(lease);
    const out = await insertRegistration(db, {
      runId: newId("run"),
      leaseId: newId("lease"),
      teamId,
      actor: by.actor,
      holderKeyId: by.holderKeyId,
      harness,
      input,
      native,
      parent,
      parentLease: { id: facts.id, path: facts.path! },
      lease: lease.lease,
      epoch,
      now,
    });
    open = false;
    await db.query("COMMIT");
    return out;
  } catch (err) {
    if (open) await db.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    db.release();
  }
}

/** One run with its direct children and its leases; another team's run is "not found". */
// getRunView's one statement: the run, its first 500 children (as runSummary reads them) and its leases.
const SUMMARY_COLUMNS = `id, task_id AS "taskId", title, harness, parent_run_id AS "parentRunId", root_run_id AS "rootRunId", depth,
  lifecycle, breaker, breaker_changed_at AS "breakerChangedAt", breaker_probe_op_id AS "breakerProbeOpId",
  breaker_held AS "breakerHeld", epoch, created_at AS "createdAt", last_heartbeat_at AS "lastHeartbeatAt", is_drill AS "isDrill"`;
const RUN_VIEW_SQL = `SELECT ${SUMMARY_COLUMNS}, team_id AS "teamId",
    lifecycle_changed_at AS "lifecycleChangedAt", lifecycle_changed_by AS "lifecycleChangedBy", lifecycle_reason AS "lifecycleReason",
    breaker_changed_by AS "breakerChangedBy", breaker_reason AS "breakerReason", breaker_failures AS "breakerFailures",
    native_session_id AS "nativeSessionId", native_agent_id AS "nativeAgentId", native_thread_id AS "nativeThreadId",
    native_turn_id AS "nativeTurnId", last_native_state AS "lastNativeState",
    (SELECT coalesce(json_agg(c ORDER BY c."createdAt", c.id), '[]')
       FROM (SELECT ${SUMMARY_COLUMNS} FROM runs WHERE parent_run_id = r.id ORDER BY created_at, id LIMIT 500) c) AS children,
    (SELECT coalesce(json_agg(l ORDER BY l."createdAt", l.id), '[]')
       FROM (SELECT id, parent_lease_id AS "parentLeaseId", scopes, valid_until AS "validUntil", revoked_at AS "revokedAt",
                    revoked_by AS "revokedBy", created_at AS "createdAt"
               FROM leases WHERE run_id = r.id) l) AS leases
  , EXISTS (SELECT 1 FROM runs h WHERE h.id = ANY (r.path) AND h.team_id = r.team_id AND h.holder_key_id = $2) AS "holds"
  FROM runs r WHERE r.id = $1`;

type JsonDates<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] extends Date ? string : string | null };
type RunViewRow = SummaryRow &
  Pick<
    RunRow,
    | "teamId"
    | "lifecycleChangedAt"
    | "lifecycleChangedBy"
    | "lifecycleReason"
    | "breakerChangedBy"
    | "breakerReason"
    | "breakerFailures"
    | "nativeSessionId"
    | "nativeAgentId"
    | "nativeThreadId"
    | "nativeTurnId"
    | "lastNativeState"
  > & {
    children: JsonDates<SummaryRow, "breakerChangedAt" | "createdAt" | "lastHeartbeatAt">[];
    leases: {
      id: string;
      parentLeaseId: string | null;
      scopes: string[];
      validUntil: string;
      revokedAt: string | null;
      revokedBy: string | null;
      createdAt: string;
    }[];
    holds: boolean;
  };

const iso = (t: string) => new Date(t).toISOString();

/**
 * The run with its children and leases: one statement on the raw pool (an authenticated read agents
 * make; through Prisma it was three queries and Prisma's per-query work, docs/design/api-process.md).
 */
export async function getRunView(p: Principal, runId: string): Promise<RunView> {
  authorize(p, "run.read");
  const { rows } = await pool().query<RunViewRow>({
    ...preparedName("quiesce_run_view"),
    text: RUN_VIEW_SQL,
    values: [runId, p.type === "key" ? p.keyId : null],
  });
  const r = rows[0];
  if (!r) throw notFound("run");
  assertTeam(p, r.teamId, "run");
  const now = Date.now();
  return {
    ...runSummary(r, now),
    ...runState(r),
    children: r.children.map((c) =>
      runSummary(
        {
          ...c,
          breakerChangedAt: new Date(c.breakerChangedAt),
          createdAt: new Date(c.createdAt),
          lastHeartbeatAt: c.lastHeartbeatAt === null ? null : new Date(c.lastHeartbeatAt),
        },
        now,
      ),
    ),
    leases: r.leases.map((l) => ({
      // A lease id is a capability: only its run's holders (or the system) see it.
      leaseId: r.holds || p.type === "system" ? l.id : null,
      parentLeaseId: l.parentLeaseId,
      scopes: l.scopes,
      validUntil: iso(l.validUntil),
      revokedAt: l.revokedAt === null ? null : iso(l.revokedAt),
      revokedBy: l.revokedBy,
      createdAt: iso(l.createdAt),
    })),
  };
}

function decodeCursor(c: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(c, "base64url").toString("utf8")) as [string, string];
    const d = new Date(at);
    if (typeof id !== "string" || Number.isNaN(d.getTime())) throw new Error();
    return { at: d, id };
  } catch {
    throw badRequest("query.cursor: not a cursor this API issued");
  }
}

/** The team's runs, newest first, keyset-paginated (stable under concurrent inserts). */
export async function listRuns(p: Principal, filter: ListRunsQuery & { teamId?: string }): Promise<ListRunsResponse> {
  authorize(p, "run.read");
  const teamId = teamFor(p, filter.teamId);
  const limit = filter.limit ?? 50;
  const cursor = filter.cursor ? decodeCursor(filter.cursor) : null;
  const and: object[] = [];
  if (filter.q) and.push(runSearchWhere(filter.q));
  if (cursor) and.push({ OR: [{ createdAt: { lt: cursor.at } }, { createdAt: cursor.at, id: { lt: cursor.id } }] });
  const rows = await prisma().run.findMany({
    where: {
      teamId,
      ...(filter.lifecycle ? { lifecycle: filter.lifecycle } : {}),
      ...(filter.parentRunId ? { parentRunId: filter.parentRunId } : filter.rootsOnly === "true" ? { parentRunId: null } : {}),
      ...(and.length ? { AND: and } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last ? Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id])).toString("base64url") : null;
  const now = Date.now();
  return { runs: page.map((r) => runSummary(r, now)), nextCursor };
}
