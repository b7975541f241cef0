// Verifying the audit trail. The hash chain alone catches an edited or deleted middle row, but not
// deletion of the newest rows, nor an edit followed by recomputing every hash after it. So the head of
// each team's chain (last row id, its hash, the row count) is also recorded APART from the chain:
// audit_checkpoints rows (written by each verification, each stop receipt and periodically) and the
// `audit_head` every stop receipt carries in its signed body. A truncated chain no longer reaches a
// recorded head; a re-chained one reaches it with a different hash. Printing the checkpoints lets an
// operator keep copies outside the database, too.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { auditHeadTx, recordAuditCheckpointTx, type AuditHead } from "./checkpoints";
import { auditHash } from "./audit";
import { authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";

const GENESIS = "0".repeat(64);

export type { AuditHead };

/** Periodic checkpoints: one for every chain whose head moved since its last checkpoint. System only. */
export async function recordPeriodicCheckpoints(p: Principal): Promise<number> {
  if (p.type !== "system") authorize(p, "member.manage");
  const teams: (string | null)[] = [null, ...(await prisma().team.findMany({ select: { id: true } })).map((t) => t.id)];
  let written = 0;
  for (const teamId of teams) {
    await prisma().$transaction(async (tx) => {
      const head = await auditHeadTx(tx, teamId);
      if (!head) return;
      const last = await tx.auditCheckpoint.findFirst({ where: { teamId }, orderBy: { id: "desc" } });
      if (last && last.lastEventId.toString() === head.eventId && last.headHash === head.hash) return;
      await tx.auditCheckpoint.create({
        data: { teamId, lastEventId: BigInt(head.eventId), headHash: head.hash, eventCount: head.count, source: "periodic" },
      });
      written++;
    });
  }
  return written;
}

export interface AuditProblem {
  kind: "chain_broken" | "truncated" | "rechained" | "count_mismatch";
  detail: string;
}

export interface ChainReport {
  teamId: string | null;
  team: string;
  events: number;
  head: AuditHead | null;
  checkpointsChecked: number;
  receiptsChecked: number;
  problems: AuditProblem[];
  checkpoints: { id: string; source: string; at: string; lastEventId: string; headHash: string; eventCount: number }[];
}

export interface AuditVerifyReport {
  ok: boolean;
  chains: ChainReport[];
}

async function verifyChain(teamId: string | null, label: string): Promise<ChainReport> {
  const rows = await prisma().auditEvent.findMany({ where: { teamId }, orderBy: { id: "asc" } });
  const problems: AuditProblem[] = [];
  let prev = GENESIS;
  const byId = new Map<string, { hash: string; index: number }>();
  rows.forEach((r, index) => {
    const expected = auditHash(
      prev,
      { teamId: r.teamId, actor: r.actor, action: r.action, target: r.target, before: r.before ?? undefined, after: r.after ?? undefined },
      r.at,
    );
    if (problems.length === 0 && (r.prevHash !== prev || r.hash !== expected)) {
      problems.push({
        kind: "chain_broken",
        detail: `row ${r.id}: ${r.prevHash !== prev ? "does not follow the row before it (a row was removed or edited)" : "its content does not match its hash (edited)"}`,
      });
    }
    byId.set(r.id.toString(), { hash: r.hash, index });
    prev = r.hash;
  });
  const checkAgainst = (what: string, eventId: string, hash: string, count: number | null) => {
    const row = byId.get(eventId);
    if (!row) {
      problems.push({ kind: "truncated", detail: `${what} recorded head row ${eventId}, which is gone (rows deleted from the chain)` });
    } else if (row.hash !== hash) {
      problems.push({
        kind: "rechained",
        detail: `${what} recorded head row ${eventId} with hash ${hash.slice(0, 12)}…, the chain now has ${row.hash.slice(0, 12)}… (rows edited and the chain recomputed)`,
      });
    } else if (count !== null && row.index + 1 !== count) {
      problems.push({
        kind: "count_mismatch",
        detail: `${what} counted ${count} rows up to row ${eventId}, the chain now has ${row.index + 1}`,
      });
    }
  };
  const checkpoints = await prisma().auditCheckpoint.findMany({ where: { teamId }, orderBy: { id: "asc" } });
  for (const c of checkpoints)
    checkAgainst(`checkpoint ${c.id} (${c.source}, ${c.at.toISOString()})`, c.lastEventId.toString(), c.headHash, c.eventCount);
  let receiptsChecked = 0;
  if (teamId) {
    const receipts = await prisma().stopReceipt.findMany({
      where: { barrier: { teamId } },
      select: { barrierId: true, version: true, body: true },
    });
    for (const r of receipts) {
      const head = (r.body as { audit_head?: { event_id?: string; hash?: string; count?: number } } | null)?.audit_head;
      if (!head?.event_id || !head.hash) continue;
      receiptsChecked++;
      checkAgainst(`receipt ${r.barrierId} v${r.version}`, head.event_id, head.hash, head.count ?? null);
    }
  }
  const last = rows.at(-1);
  return {
    teamId,
    team: label,
    events: rows.length,
    head: last ? { eventId: last.id.toString(), hash: last.hash, count: rows.length } : null,
    checkpointsChecked: checkpoints.length,
    receiptsChecked,
    problems,
    checkpoints: checkpoints.slice(-5).map((c) => ({
      id: c.id.toString(),
      source: c.source,
      at: c.at.toISOString(),
      lastEventId: c.lastEventId.toString(),
      headHash: c.headHash,
      eventCount: c.eventCount,
    })),
  };
}

/**
 * Verifies the chain of one team (by id) or of every team plus the global chain. An intact chain gets
 * a new checkpoint (source "verify"), so the next verification can tell if anything changes after it.
 */
export async function verifyAudit(p: Principal, opts: { teamId?: string | null; checkpoint?: boolean } = {}): Promise<AuditVerifyReport> {
  authorize(p, "audit.read");
  let targets: { id: string | null; label: string }[];
  if (p.type !== "system") {
    targets = [{ id: p.teamId, label: p.teamId }];
  } else if (opts.teamId) {
    const t = await prisma().team.findUnique({ where: { id: opts.teamId }, select: { id: true, slug: true } });
    targets = t ? [{ id: t.id, label: t.slug }] : [];
  } else {
    const teams = await prisma().team.findMany({ select: { id: true, slug: true }, orderBy: { createdAt: "asc" } });
    targets = [{ id: null, label: "(global: sign-ins and users)" }, ...teams.map((t) => ({ id: t.id, label: t.slug }))];
  }
  const chains: ChainReport[] = [];
  for (const t of targets) {
    const report = await verifyChain(t.id, t.label);
    if (report.problems.length === 0 && opts.checkpoint !== false && report.head) {
      await prisma().$transaction((tx) => recordAuditCheckpointTx(tx, t.id, "verify"));
    }
    chains.push(report);
  }
  return { ok: chains.every((c) => c.problems.length === 0), chains };
}
