// `quiesce audit verify` (from the hardening review), through the real CLI process against the
// real database. The chain alone (verifyAuditChain) misses deleting the newest rows and an edit
// followed by recomputing every later hash; the heads recorded apart from the chain catch both.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { auditHash, verifyAuditChain } from "../../lib/modules/audit/audit";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import type { Principal } from "../../lib/platform/auth/principal";
import { runCli, CLI_TEST_TIMEOUT } from "../cli/run-cli";

const SYSTEM: Principal = { type: "system", name: "test" };

async function teamWithHistory(label: string) {
  const teamId = newId("team");
  const slug = `${label}-${teamId.slice(5, 12).toLowerCase()}`;
  await prisma().team.create({ data: { id: teamId, slug, name: label } });
  for (let i = 0; i < 4; i++) await createApiKey(SYSTEM, { teamId, kind: "agent", name: `k${i}` });
  return { teamId, slug };
}

beforeAll(async () => {
  await prisma().$connect();
});
afterAll(async () => {
  await prisma().$disconnect();
});

test(
  "an intact chain verifies (exit 0) and gets a checkpoint, which is printed",
  async () => {
    const { slug } = await teamWithHistory("intact");
    const r = await runCli(["audit", "verify", "--team", slug]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok   ${slug}: 4 events`);
    const again = await runCli(["audit", "verify", "--team", slug]);
    expect(again.stdout).toMatch(/checkpoint \d+ \S+ verify: row \d+ \(4 events\) [0-9a-f]{64}/);
  },
  CLI_TEST_TIMEOUT,
);

test(
  "deleting the newest rows is caught against the checkpoint (the chain alone looks intact)",
  async () => {
    const { teamId, slug } = await teamWithHistory("truncated");
    expect((await runCli(["audit", "verify", "--team", slug])).code).toBe(0);
    const newest = await prisma().auditEvent.findFirstOrThrow({ where: { teamId }, orderBy: { id: "desc" } });
    await prisma().auditEvent.delete({ where: { id: newest.id } });
    expect(await verifyAuditChain(prisma(), teamId)).toBeNull();
    const r = await runCli(["audit", "verify", "--team", slug, "--json"]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(false);
    expect(report.chains[0].problems.map((p: { kind: string }) => p.kind)).toContain("truncated");
  },
  CLI_TEST_TIMEOUT,
);

test(
  "an edit followed by re-chaining every later row is caught (the chain alone looks intact)",
  async () => {
    const { teamId, slug } = await teamWithHistory("rechained");
    expect((await runCli(["audit", "verify", "--team", slug])).code).toBe(0);
    const rows = await prisma().auditEvent.findMany({ where: { teamId }, orderBy: { id: "asc" } });
    // Edit the second row, then recompute its hash and every hash after it, as a careful forger would.
    let prev = rows[0]!.hash;
    for (const r of rows.slice(1)) {
      const after = r.id === rows[1]!.id ? { ...(r.after as object), name: "forged" } : r.after;
      const hash = auditHash(
        prev,
        { teamId: r.teamId, actor: r.actor, action: r.action, target: r.target, before: r.before ?? undefined, after: after ?? undefined },
        r.at,
      );
      await prisma().auditEvent.update({ where: { id: r.id }, data: { after: after as never, prevHash: prev, hash } });
      prev = hash;
    }
    expect(await verifyAuditChain(prisma(), teamId)).toBeNull();
    const r = await runCli(["audit", "verify", "--team", slug]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("rechained");
    expect(r.stdout).toContain("audit trail damaged");
  },
  CLI_TEST_TIMEOUT,
);

test(
  "an edited middle row is still caught by the chain itself",
  async () => {
    const { teamId, slug } = await teamWithHistory("edited");
    const rows = await prisma().auditEvent.findMany({ where: { teamId }, orderBy: { id: "asc" } });
    await prisma().auditEvent.update({ where: { id: rows[1]!.id }, data: { actor: "system:forger" } });
    const r = await runCli(["audit", "verify", "--team", slug]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("chain_broken");
  },
  CLI_TEST_TIMEOUT,
);

test(
  "periodic checkpoints: one per chain whose head moved",
  async () => {
    const { teamId } = await teamWithHistory("periodic");
    const r = await runCli(["audit", "checkpoint"]);
    expect(r.code).toBe(0);
    expect(await prisma().auditCheckpoint.count({ where: { teamId, source: "periodic" } })).toBe(1);
    await runCli(["audit", "checkpoint"]);
    expect(await prisma().auditCheckpoint.count({ where: { teamId, source: "periodic" } })).toBe(1);
  },
  CLI_TEST_TIMEOUT,
);
