// The hash-chained audit trail against the real database: appends chain, concurrent appends never fork
// the chain, jsonb's key reordering does not break verification, and any edit or removal is detected;
// the SQL append (quiesce_append_audit: inside the gate, and at commit for run registration) writes the
// very hash the JS append writes, interleaved with it on one chain and racing it.
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { appendAudit, appendAuditAtCommit, appendAudits, auditHash, verifyAuditChain } from "./audit";
import { canonicalJson } from "../../control/canonical";

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

test("the hash the SQL append writes is auditHash's (non-ASCII text, nested objects, no team)", async () => {
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
    // The append is the SQL function's: the row it writes verifies with the JS hash.
    const t = e.teamId === null ? null : await team();
    await prisma().$transaction((tx) => appendAudit(tx, { ...e, teamId: t }));
    const row = await prisma().auditEvent.findFirstOrThrow({ where: { teamId: t, target: e.target }, orderBy: { id: "desc" } });
    expect(row.hash).toBe(auditHash(row.prevHash, { ...e, teamId: t }, row.at));
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

// Values the SQL canonicalizer must print exactly as lib/control/canonical.ts does (RFC 8785).
const CANON_CASES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  42,
  -9007199254740991,
  9007199254740991,
  "",
  'quote " backslash \\ slash / tab \t newline \n cr \r bs \b ff \f nul-ish \u0001 \u001f del \u007f',
  "unicode é ß 中文 😀 \u2028 \u2029 \ufeff",
  [],
  {},
  [1, "a", null, [true, {}], { b: 1, a: 2 }],
  { b: 1, a: 2, A: 3, _: 4, "10": 5, "9": 6, é: 7, "": 8, aa: 9, "a b": 10 },
  { nested: { z: [3, 2, 1], y: { x: "w" } }, taskId: 'deploy "prod" ✓', scopes: ["*"], epoch: 7, drill: true },
];

test("quiesce_jcs prints every value exactly as canonicalJson does", async () => {
  for (const v of CANON_CASES) {
    const [row] = await prisma().$queryRawUnsafe<{ t: string }[]>("SELECT quiesce_jcs($1::jsonb) AS t", JSON.stringify(v));
    expect(row!.t, JSON.stringify(v)).toBe(canonicalJson(v));
  }
});

// Numbers beyond safe integers: ECMAScript's Number::toString layout (RFC 8785 §3.2.2.3), from float8's
// shortest digits. Before migration 20261203003000 the SQL refused them, so Node had its own append.
const NUMBER_CASES = [
  1.5,
  -1.5,
  0.1,
  0.3,
  1 / 3,
  -2 / 3,
  123.456,
  1e21,
  1e-7,
  1.5e-7,
  0.000001,
  0.0000015,
  1e-6,
  123e-20,
  9007199254740992,
  1.7976931348623157e308,
  5e-324,
  4.35,
  2 ** 60,
  1e20,
  12345678901234567890,
  0.1 + 0.2,
  100.5,
  1e300 / 7,
  -1e-10,
];

test("quiesce_jcs prints every number, fractions and large ones too, exactly as canonicalJson does", async () => {
  for (const v of [...NUMBER_CASES, { n: NUMBER_CASES }]) {
    const [row] = await prisma().$queryRawUnsafe<{ t: string }[]>("SELECT quiesce_jcs($1::jsonb) AS t", JSON.stringify(v));
    expect(row!.t, JSON.stringify(v)).toBe(canonicalJson(v));
  }
  const t = await team();
  await append(t, 1, { quietPeriodSeconds: 0.5, ratio: 1 / 3, big: 1e21 });
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
});

test("the batch append chains its rows in order under one lock, interleaving and racing single appends", async () => {
  const t = await team();
  const batch = (from: number, n: number) =>
    prisma().$transaction((tx) =>
      appendAudits(
        (sql, params) => tx.$queryRawUnsafe(sql, ...params),
        t,
        Array.from({ length: n }, (_, i) => ({
          actor: "system:test",
          action: "test.batch",
          target: `b${from + i}`,
          before: i % 2 ? null : { i },
          after: { reason: "Zoë ✓", f: 0.25 },
        })),
      ),
    );
  await append(t, 1);
  await batch(100, 5);
  await Promise.all([batch(200, 20), append(t, 2), batch(300, 20), append(t, 3), batch(400, 0)]);
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  expect(rows).toHaveLength(48);
  expect(new Set(rows.map((r) => r.prevHash)).size).toBe(48);
  const b = rows.filter((r) => r.target.startsWith("b1")).map((r) => r.target);
  expect(b).toEqual(["b100", "b101", "b102", "b103", "b104"]);
  expect(rows.find((r) => r.target === "b101")!.before).toBeNull();
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
});

test("the SQL append writes the hash the JS append writes; both interleave on one chain, also racing", async () => {
  const t = await team();
  const sqlAppend = (i: number, after: unknown) =>
    prisma().$transaction((tx) =>
      appendAuditAtCommit(
        tx,
        { teamId: t, actor: "system:test", action: "test.sql", target: `s${i}`, before: { breaker: "open" }, after },
        { kind: "run", teamId: t, rootRunId: `s${i}` },
      ),
    );
  await append(t, 1);
  await sqlAppend(2, CANON_CASES.at(-1));
  await append(t, 3);
  await sqlAppend(4, null);
  await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? append(t, 10 + i) : sqlAppend(10 + i, { i, s: "x" }))));
  const rows = await prisma().auditEvent.findMany({ where: { teamId: t }, orderBy: { id: "asc" } });
  expect(rows).toHaveLength(20);
  expect(new Set(rows.map((r) => r.prevHash)).size).toBe(20);
  const sql = rows.find((r) => r.target === "s2")!;
  expect(sql.hash).toBe(
    auditHash(
      sql.prevHash,
      { teamId: t, actor: "system:test", action: "test.sql", target: "s2", before: { breaker: "open" }, after: CANON_CASES.at(-1) },
      sql.at,
    ),
  );
  expect(rows.find((r) => r.target === "s4")!.after).toBeNull();
  expect(await verifyAuditChain(prisma(), t)).toBeNull();
  // Intents never outlive their transaction.
  expect(await prisma().$queryRawUnsafe("SELECT * FROM audit_intents")).toEqual([]);
  // …and the check still bites on a row the SQL wrote.
  await prisma().auditEvent.update({ where: { id: sql.id }, data: { target: "edited" } });
  expect(await verifyAuditChain(prisma(), t)).toBe(sql.id);
});
