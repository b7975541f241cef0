// The write of the raw-pool registration paths (root and child): ONE statement inserts the run and its
// lease and records the run.register audit intent, appended with its notification at COMMIT
// (appendAuditAtCommit, docs/design/run-registration.md).
import "server-only";
import type pg from "pg";
import { preparedName } from "../../../platform/db/pool";
import { controlPayload } from "../../../platform/db/notify";
import { insertColumns, type LeaseField, type RunField } from "../../../platform/db/insert-columns";
import { newId } from "../../../platform/ids";
import { leasePath, type LeaseGrant } from "../../../control/lease";
import type { CreateRunResponse } from "../../../schemas/runs";
import { createdAnswer, type Registration } from "./registration";

type Queryable = Pick<pg.PoolClient, "query">;

// Every column of runs and leases is named once, here (the type lists them all: a column added to
// schema.prisma fails to compile until it is given a value or DEFAULT).
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
  restartedFromRunId: "$27",
  restartedFromDigest: "$28",
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

/** Where the new run goes: under a parent (with the lease it derives from) or as a root. */
export interface Placement {
  parent: { runId: string; rootRunId: string; path: string[]; depth: number; isDrill: boolean } | null;
  parentLease: { id: string; path: string[] } | null;
  lease: LeaseGrant;
  epoch: number;
  now: number;
}

/** The run, its lease and the run.register audit intent (appended with its notification at COMMIT). */
export async function insertRegistration(db: Queryable, reg: Registration, at: Placement): Promise<CreateRunResponse> {
  const runId = newId("run");
  const leaseId = newId("lease");
  const { input, native } = reg;
  const rootRunId = at.parent?.rootRunId ?? runId;
  const parentRunId = at.parent?.runId ?? null;
  const validUntil = new Date(at.lease.validUntil);
  const isDrill = input.drill === true || at.parent?.isDrill === true;
  const after = {
    taskId: input.taskId,
    parentRunId,
    rootRunId,
    leaseId,
    scopes: at.lease.scopes,
    validUntil: validUntil.toISOString(),
    epoch: at.epoch,
    ...(isDrill ? { drill: true } : {}),
    ...(reg.restartOf ? { restartedFrom: reg.restartOf.runId, restartedFromDigest: reg.restartOf.digest } : {}),
  };
  await db.query({
    ...preparedName("quiesce_register_run"),
    text: REGISTER_RUN_SQL,
    values: [
      runId,
      reg.teamId,
      input.taskId,
      parentRunId,
      rootRunId,
      [...(at.parent?.path ?? []), runId],
      at.parent ? at.parent.depth + 1 : 0,
      reg.harness,
      native.agentId ?? null,
      native.threadId ?? null,
      native.turnId ?? null,
      input.title ?? null,
      at.epoch,
      reg.by.actor,
      isDrill,
      leaseId,
      at.parentLease?.id ?? null,
      leasePath(at.parentLease?.path ?? null, leaseId),
      at.lease.scopes,
      validUntil,
      at.lease.ttlSeconds,
      new Date(at.lease.maxValidUntil),
      new Date(at.now),
      JSON.stringify(after),
      controlPayload({ kind: "run", teamId: reg.teamId, rootRunId, runIds: [runId] }),
      reg.by.holderKeyId,
      reg.restartOf?.runId ?? null,
      reg.restartOf?.digest ?? null,
    ],
  });
  return createdAnswer({ runId, leaseId, epoch: at.epoch, parentRunId, rootRunId }, at.lease);
}
