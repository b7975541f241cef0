// The audit page's actor filter takes the e-mail the page shows (the column holds user:/key: ids).
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { listConsoleAudit } from "../../lib/modules/audit/console";
import { createStop } from "../../lib/modules/stop/stops";
import { makeTeam, makeUser } from "../support/fixtures";

afterAll(async () => {
  await prisma().$disconnect();
});

test("actor filter: an e-mail (or part of one) of a member matches that member's rows, and only theirs", async () => {
  const { teamId } = await makeTeam("audit-email");
  const a = await makeUser(teamId, "admin");
  const b = await makeUser(teamId, "operator");
  const pa = { type: "user", userId: a.userId, email: a.email, teamId, role: "admin" } as const;
  const pb = { type: "user", userId: b.userId, email: b.email, teamId, role: "operator" } as const;
  await createStop(pa, { action: "pause", filter: { taskPrefix: "none-a-" }, reason: "by a", dryRun: false });
  await createStop(pb, { action: "pause", filter: { taskPrefix: "none-b-" }, reason: "by b", dryRun: false });
  const byA = await listConsoleAudit(pa, { actor: a.email });
  expect(byA.items.length).toBeGreaterThan(0);
  expect(byA.items.every((r) => r.actor.includes(a.userId))).toBe(true);
  const byId = await listConsoleAudit(pa, { actor: b.userId });
  expect(byId.items.every((r) => r.actor.includes(b.userId))).toBe(true);
  expect((await listConsoleAudit(pa, { actor: "nobody-at-all@example.invalid" })).items).toHaveLength(0);
});
