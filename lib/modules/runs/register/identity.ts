// The identity steps of the transactional registration path: a native session, thread or fork source
// that belongs to a killed run, and a native session already registered (docs/architecture.md#security).
import "server-only";
import type { Tx } from "../../../platform/db/prisma";
import { QuiesceError } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";
import type { CreateRunBody, CreateRunResponse } from "../../../schemas/runs";
import { appendAudit } from "../../audit/audit";
import { isHolder } from "../holder";
import type { Registration } from "./registration";

type RunRow = NonNullable<Awaited<ReturnType<Tx["run"]["findUnique"]>>>;

/** The answer to a registration of a run that already exists: its newest lease. */
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

/** Registrations naming the same identity go one at a time (sorted keys: no deadlock between them). */
async function lockIdentityKey(tx: Tx, key: string): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 2))", key);
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

/**
 * No resurrection: a killed run's session or thread resolves to that run whatever agent or parent this
 * registration names (the answer, to its holder only), and no fork of it is registered. Null: no
 * identity of the registration belongs to a killed run; the identities are locked until COMMIT.
 */
export async function killedIdentityAnswer(tx: Tx, p: Principal, reg: Registration): Promise<CreateRunResponse | null> {
  const { teamId, native, input } = reg;
  const identities = [
    ...new Set([native.sessionId, native.threadId, input.forkedFrom?.sessionId, input.forkedFrom?.threadId].filter(Boolean)),
  ].sort() as string[];
  if (identities.length === 0) return null;
  for (const id of identities) await lockIdentityKey(tx, `identity:${teamId}:${id}`);
  const killed = await killedIdentityTx(tx, teamId, native, input.forkedFrom);
  if (!killed) return null;
  if (killed.forked) throw new QuiesceError("conflict", "forkedFrom: the session or thread this one comes from belongs to a killed run");
  const run = await tx.run.findUniqueOrThrow({ where: { id: killed.runId } });
  if (!(await isHolder(tx, p, { teamId, path: run.path })))
    throw new QuiesceError("conflict", "native session or thread belongs to a killed run held by another key");
  return existingRegistration(tx, run);
}

/**
 * The native session's live run under the same agent and parent, if it is registered already: the
 * registration answers with its lease, only to its holder. Null: none (the key stays locked until COMMIT).
 */
export async function registeredSessionAnswer(
  tx: Tx,
  p: Principal,
  reg: Registration,
  parentRunId: string | null,
): Promise<CreateRunResponse | null> {
  const { teamId, native, by } = reg;
  if (!native.sessionId) return null;
  await lockIdentityKey(tx, `native:${teamId}:${native.sessionId}:${native.agentId ?? ""}:${parentRunId ?? ""}`);
  // A finished run's session registering again is a new run (its harness resumed it): finished is final.
  const existing = await tx.run.findFirst({
    where: { teamId, nativeSessionId: native.sessionId, nativeAgentId: native.agentId ?? null, parentRunId, finishedAt: null },
    orderBy: { createdAt: "asc" },
  });
  if (!existing) return null;
  if (!(await isHolder(tx, p, { teamId, path: existing.path })))
    throw new QuiesceError("conflict", "native session: already registered by another key (only its holder may register it again)");
  // A harness re-registers its session at each new turn: the run keeps its newest native turn id, and
  // every turn it announced stays in the audit trail.
  if (native.turnId && existing.nativeTurnId !== native.turnId) {
    await tx.run.update({ where: { id: existing.id }, data: { nativeTurnId: native.turnId } });
    await appendAudit(tx, {
      teamId,
      actor: by.actor,
      action: "run.native_turn",
      target: existing.id,
      before: { turnId: existing.nativeTurnId },
      after: { turnId: native.turnId },
    });
  }
  return existingRegistration(tx, existing);
}
