import { afterAll, expect, test } from "vitest";
import { prisma } from "../lib/platform/db/prisma";
import { newId } from "../lib/platform/ids";

afterAll(async () => {
  await prisma().$disconnect();
});

test("the migrated test database accepts writes through the Prisma adapter", async () => {
  const id = newId("team");
  await prisma().team.create({ data: { id, slug: id.toLowerCase(), name: "Smoke" } });
  const team = await prisma().team.findUniqueOrThrow({ where: { id } });
  // Defaults: pause reclaim off, a 2 s quiet period for every barrier.
  expect(team.pausePolicySeconds).toBeNull();
  expect(team.quietPeriodMs).toBe(2000);
});
