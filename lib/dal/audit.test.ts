// The hash-chained audit trail against the real database: appends chain, concurrent appends never fork
// the chain, jsonb's key reordering does not break verification, and any edit or removal is detected.
import { afterAll, expect, test } from "vitest";
import { prisma } from "../db/prisma";
import { newId } from "../ids";
import { appendAudit, auditHash, auditHashParts, verifyAuditChain } from "./audit";
import { createHash } from "node:crypto";

afterAll(async () => {
  await prisma().$disconnect();
});

async function team(): Promise<string> {
  const id = newId("team");
  await prisma().team.create({ data: { id, slug: id.toLowerCase(), name: "audit" } });
  return id;
}

const append = (teamId: string, i: number, after: unknown = { n: i }) =>
  prisma().$transaction((tx) =>
    appendAudit(tx, { teamId, actor: "system:test", action: "test.append", target: `t${i}`, before: null, after }),
  );

test("appended rows chain onto each other and verify, including objects whose key order jsonb changes", async () => {
  const t = await team();
  await append(t, 1, { zeta: 1, a: { y: [1, { d: 2, c: 3 }], b: null }, longer_key: "x", k: true });
  await append(t, 2, { reason: "why", lifecycle: "paused" });
  await append(t, 3);
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  expect(rows).toHaveLength(3);
  expect(rows[0]!.prevHash).toBe("0".repeat(64));
  expect(rows[1]!.prevHash).toBe(rows[0]!.hash);
  expect(rows[2]!.prevHash).toBe(rows[1]!.hash);
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
});

test("the hash computed in SQL around the predecessor is auditHash's (non-ASCII text, nested objects, no team)", async () => {
  const at = new Date("2026-12-01T03:04:05.678Z");
  for (const e of [
    {
      teamId: "team_x",
      actor: "user:u1 (Zoë ✓)",
      action: "run.kill",
      target: "run_1",
      before: { a: 1 },
      after: { reason: '日本 "q" \\ ✓', z: [1, { b: 2, a: null }] },
    },
    { teamId: null, actor: "system:x", action: "a", target: "t" },
  ]) {
    const prev = createHash("sha256").update("p").digest("hex");
    const { head, tail } = auditHashParts(e, at);
    expect(
      createHash("sha256")
        .update(head + prev + tail)
        .digest("hex"),
    ).toBe(auditHash(prev, e, at));
  }
  const t = await team();
  await append(t, 1, { reason: 'Zoë ✓ 日本 — "quoted"', emoji: "🛑" });
  await append(t, 2);
  await prisma().$transaction((tx) => appendAudit(tx, { teamId: null, actor: "system:test", action: "test.null", target: "x" }));
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
});

test("concurrent appends for one team serialize: the chain never forks", async () => {
  const t = await team();
  await Promise.all(Array.from({ length: 12 }, (_, i) => append(t, i)));
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  expect(rows).toHaveLength(12);
  expect(new Set(rows.map((r) => r.prevHash)).size).toBe(12);
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
});

test("an edited row is reported as the first broken link", async () => {
  const t = await team();
  for (let i = 0; i < 4; i++) await append(t, i);
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  await prisma().auditEvent.update({ where: { id: rows[2]!.id }, data: { after: { n: 999 } } });
  expect(await verifyAuditChain(prisma(), t)).toBe(rows[2]!.id);
});

test("a removed row breaks the chain at its successor", async () => {
  const t = await team();
  for (let i = 0; i < 4; i++) await append(t, i);
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  await prisma().auditEvent.delete({ where: { id: rows[1]!.id } });
  expect(await verifyAuditChain(prisma(), t)).toBe(rows[2]!.id);
});

test("chains are per team: another team's rows neither join nor break this chain", async () => {
  const [t1, t2] = [await team(), await team()];
  await append(t1, 1);
  await append(t2, 1);
  await append(t1, 2);
  const r2 = await prisma().auditEvent.findFirstOrThrow({ where: { teamId: t2 } });
  expect(r2.prevHash).toBe("0".repeat(64));
  expect(await verifyAuditChain(prisma(), t1)).toBeNull();
  expect(await verifyAuditChain(prisma(), t2)).toBeNull();
});
