// Append-only, hash-chained audit trail (docs/architecture.md#, #security). Each row carries the previous row's hash
// (per team), so a removed or edited row breaks the chain. Call inside the transaction that makes the
// change it records, so the change and its audit row commit together.
import "server-only";
import { createHash } from "node:crypto";
import { canonicalJson } from "../control/canonical";
import type { Tx } from "../db/prisma";
import { controlPayload, type ControlEvent } from "./internal/notify";

export interface AuditInput {
  teamId: string | null;
  actor: string;
  action: string;
  target: string;
  before?: unknown;
  after?: unknown;
}

const GENESIS = "0".repeat(64);

export function auditHash(prevHash: string, e: AuditInput, at: Date): string {
  // Canonical (key-sorted) JSON: jsonb does not keep key order, so the hash must not depend on it.
  const canonical = canonicalJson([prevHash, e.teamId, e.actor, e.action, e.target, e.before ?? null, e.after ?? null, at.toISOString()]);
  return createHash("sha256").update(canonical).digest("hex");
}

export async function appendAudit(tx: Tx, e: AuditInput): Promise<void> {
  // Serialize appends per team so two writers never chain onto the same predecessor.
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_SQL})`, auditLockKey(e.teamId));
  await appendAuditLocked((sql, params) => tx.$queryRawUnsafe(sql, ...params), e);
}

/** One statement in the caller's transaction (a Prisma transaction, or a pg client's: lib/db/pool-tx.ts). */
export type RawQuery = <T = Record<string, unknown>>(sql: string, params: unknown[]) => Promise<T[]>;

/**
 * The append itself, for a caller that already holds the team's audit key (auditLockSql) in this
 * transaction, taken in an EARLIER statement (the predecessor is read with a snapshot taken after it).
 * Raw statements (not the ORM): every control write pays for these two round trips.
 */
export async function appendAuditLocked(q: RawQuery, e: AuditInput): Promise<void> {
  // ONE statement: the predecessor's hash is read and the row's hash computed in it — sha256 over the
  // canonical text auditHash hashes, assembled around the predecessor (auditHashParts).
  const at = new Date();
  const { head, tail } = auditHashParts(e, at);
  await q(
    `INSERT INTO audit_events (team_id, actor, action, target, before, after, at, prev_hash, hash)
     SELECT $1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, p.h, encode(sha256(convert_to($8 || p.h || $9, 'UTF8')), 'hex')
       FROM (SELECT coalesce((SELECT hash FROM audit_events WHERE ${e.teamId === null ? "team_id IS NULL AND $1::text IS NULL" : "team_id = $1"}
                              ORDER BY id DESC LIMIT 1), $10) AS h) p`,
    [e.teamId, e.actor, e.action, e.target, jsonOrNull(e.before), jsonOrNull(e.after), at, head, tail, GENESIS],
  );
}

/**
 * auditHash's canonical text split around the predecessor's hash: canonical = head + prevHash + tail
 * (RFC 8785 writes the array `[prevHash, …]` as `["` + prevHash + `",` + the rest, and a hash is hex).
 */
export function auditHashParts(e: AuditInput, at: Date): { head: string; tail: string } {
  const rest = canonicalJson([e.teamId, e.actor, e.action, e.target, e.before ?? null, e.after ?? null, at.toISOString()]);
  return { head: '["', tail: `",${rest.slice(1)}` };
}

/** The team's audit key as SQL arguments of pg_advisory_xact_lock, for a statement that takes it itself. */
export function auditLockKey(teamId: string | null): string {
  return `audit:${teamId ?? "-"}`;
}
export const AUDIT_LOCK_SQL = "hashtextextended($1, 1)";

// As the ORM stored Json fields: absent (undefined) → SQL NULL; anything else as JSON text.
function jsonOrNull(v: unknown): string | null {
  return v === undefined || v === null ? null : JSON.stringify(v);
}

/**
 * appendAudit, deferred to COMMIT, for hot paths driven from Node (run registration): the row is recorded
 * as an intent now, and a deferred trigger (prisma/migrations/20261202002300_gate_throughput) appends it
 * while COMMIT runs — same per-team lock, same previous-hash read, same hash as appendAudit (canonical
 * JSON in SQL, checked against auditHash by lib/dal/audit.test.ts) — and sends `notify` with it. The
 * team's audit lock is therefore taken and released inside the server, never held across a round trip
 * to Node. The row lands after every appendAudit row of the same transaction. Values must canonicalize
 * in SQL: objects, arrays, strings, booleans, null and safe integers (no fractions).
 */
export async function appendAuditAtCommit(tx: Tx, e: AuditInput, notify?: ControlEvent): Promise<void> {
  await tx.$executeRawUnsafe(
    "INSERT INTO audit_intents (team_id, actor, action, target, before, after, notify) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)",
    e.teamId,
    e.actor,
    e.action,
    e.target,
    e.before === undefined || e.before === null ? null : JSON.stringify(e.before),
    e.after === undefined || e.after === null ? null : JSON.stringify(e.after),
    notify ? controlPayload(notify) : null,
  );
}

/** Recomputes the chain for a team; returns the id of the first broken row, or null when intact. */
export async function verifyAuditChain(tx: Pick<Tx, "auditEvent">, teamId: string): Promise<bigint | null> {
  const rows = await tx.auditEvent.findMany({ where: { teamId }, orderBy: { id: "asc" } });
  let prev = GENESIS;
  for (const r of rows) {
    const expected = auditHash(
      prev,
      { teamId: r.teamId, actor: r.actor, action: r.action, target: r.target, before: r.before ?? undefined, after: r.after ?? undefined },
      r.at,
    );
    if (r.prevHash !== prev || r.hash !== expected) return r.id;
    prev = r.hash;
  }
  return null;
}
