// An expired API key is listed as expired (the console's keys page used to say "active"): the status is
// decided at read time, the same way the gate and the API refuse it.
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { createApiKey, listApiKeys, revokeApiKey } from "../../lib/modules/keys/api-keys";
import { makeTeam } from "../support/fixtures";

const SYSTEM = { type: "system", name: "test" } as const;
afterAll(async () => {
  await prisma().$disconnect();
});

test("listed status: active, expired (past expiresAt), revoked", async () => {
  const { teamId } = await makeTeam("key-status");
  await createApiKey(SYSTEM, { teamId, kind: "agent", name: "live", expiresAt: new Date(Date.now() + 3_600_000) });
  const old = await createApiKey(SYSTEM, { teamId, kind: "agent", name: "old", expiresAt: new Date(Date.now() + 3_600_000) });
  await prisma().apiKey.update({ where: { id: old.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
  const gone = await createApiKey(SYSTEM, { teamId, kind: "agent", name: "gone" });
  await revokeApiKey(SYSTEM, gone.id);
  const byName = new Map((await listApiKeys(SYSTEM, { teamId, includeRevoked: true })).map((k) => [k.name, k.status]));
  expect(Object.fromEntries(byName)).toEqual({ live: "active", old: "expired", gone: "revoked" });
});
