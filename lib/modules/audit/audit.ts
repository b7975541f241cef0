// Append-only, hash-chained audit trail (docs/architecture.md#, #security). Each row carries the previous row's hash
// (per team), so a removed or edited row breaks the chain. Call inside the transaction that makes the
// change it records, so the change and its audit row commit together.
import "server-only";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../control/canonical";
import type { Tx } from "../../platform/db/prisma";
import { controlPayload, type ControlEvent } from "../../platform/db/notify";
import { sql, toQuery, type Sql } from "../../platform/db/sql";

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

/** One statement in the caller's Prisma transaction, as `$queryRawUnsafe` takes it. */
export type RawQuery = <T = Record<string, unknown>>(sql: string, params: unknown[]) => Promise<T[]>;

/**
 * THE append: one statement, the SQL function quiesce_append_audit (lib/modules/audit/sql/quiesce_append_audit.sql) —
 * the team's audit lock, the predecessor's hash, the row and its hash, all inside the server. Node no longer
 * computes a hash to write; auditHash is kept for the verifier, which recomputes every row from what is
 * stored (lib/modules/audit/audit.test.ts checks the two agree, floats and non-ASCII text included).
 */
export async function appendAudit(tx: Tx, e: AuditInput): Promise<void> {
  await tx.$queryRawUnsafe(
    `SELECT quiesce_append_audit($1, $2, $3, $4, $5::jsonb, $6::jsonb)::text AS id`,
    e.teamId,
    e.actor,
    e.action,
    e.target,
    jsonOrNull(e.before),
    jsonOrNull(e.after),
  );
}

/**
 * The batch form: one team's rows, chained in the order given, under ONE acquisition of the team's audit
 * lock and one read of the predecessor (quiesce_append_audits). A fleet stop's batch of kills or receipts
 * appends its rows with it, as the last statement of the batch's transaction.
 */
export async function appendAudits(q: RawQuery, teamId: string | null, rows: Omit<AuditInput, "teamId">[]): Promise<void> {
  if (rows.length === 0) return;
  const { text, values } = toQuery(appendAuditsSql(teamId, rows));
  await q(text, values);
}

/** appendAudits as a statement for a transaction on the raw pool (lib/platform/db/sql.ts); rows must not be empty. */
export function appendAuditsSql(teamId: string | null, rows: Omit<AuditInput, "teamId">[]): Sql {
  const json = JSON.stringify(
    rows.map((r) => ({ actor: r.actor, action: r.action, target: r.target, before: r.before ?? null, after: r.after ?? null })),
  );
  return sql`SELECT quiesce_append_audits(${teamId}, ${json}::jsonb) AS n`;
}

// As the ORM stored Json fields: absent (undefined) → SQL NULL; anything else as JSON text.
function jsonOrNull(v: unknown): string | null {
  return v === undefined || v === null ? null : JSON.stringify(v);
}

/**
 * appendAudit, deferred to COMMIT, for hot paths driven from Node (run registration): the row is recorded
 * as an intent now, and a deferred trigger (lib/modules/audit/sql/quiesce_audit_intent_commit.sql) appends it
 * while COMMIT runs — same per-team lock, same previous-hash read, same hash as appendAudit (canonical
 * JSON in SQL, checked against auditHash by lib/modules/audit/audit.test.ts) — and sends `notify` with it. The
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
