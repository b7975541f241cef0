import { afterAll, expect, test } from "vitest";
import { prisma } from "../lib/db/prisma";
import { newId } from "../lib/ids";

afterAll(async () => { await prisma().$disconnect(); });

test("the migrated test database accepts writes through the Prisma adapter", async () => {
  const id = newId("team");
  await prisma().team.create({ data: { id, slug: id.toLowerCase(), name: "Smoke" } });
  const team = await prisma().team.findUniqueOrThrow({ where: { id } });
  expect(team.pausePolicySeconds).toBe(86400);
});
