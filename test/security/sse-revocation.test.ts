// Event streams end when the authority behind them does (from the hardening review): the one
// SSE helper re-checks every few seconds (QUIESCE_SSE_RECHECK_MS; 300 ms here). Machine API: a revoked
// key's stream ends with `event: revoked`. Console: the same helper with the console's session check
// ends the stream when the member is removed. Real HTTP, real database, real LISTEN connection.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { createApiKey, revokeApiKey } from "../../lib/modules/keys/api-keys";
import { ensureMembership } from "../../lib/modules/members/admin-directory";
import { removeMember } from "../../lib/modules/members/members";
import { resolveConsoleSession } from "../../lib/modules/sessions/session";
import { sseResponse } from "../../lib/api/sse";
import { controlListener } from "../../lib/modules/stop/abort/listener";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeWorld, type World } from "../api/fixtures";

process.env.QUIESCE_SSE_RECHECK_MS = "300";
const SYSTEM: Principal = { type: "system", name: "test" };

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

/** Reads the stream until it ends or `ms` pass; returns everything read and whether it ended. */
async function readUntilEnd(body: ReadableStream<Uint8Array>, ms: number): Promise<{ text: string; ended: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    // Not awaited: cancelling one branch of a tee() settles only when the other branch is cancelled too,
    // and a stream that never ends (the bug this guards against) must fail the assertion, not hang.
    if (left <= 0) {
      void reader.cancel().catch(() => {});
      return { text, ended: false };
    }
    const next = await Promise.race([reader.read(), new Promise<"timeout">((r) => setTimeout(() => r("timeout"), left))]);
    if (next === "timeout") {
      void reader.cancel().catch(() => {});
      return { text, ended: false };
    }
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value);
  }
}

test("machine API: revoking the key ends its open event stream within seconds", async () => {
  const key = await createApiKey(SYSTEM, { teamId: w.a.teamId, kind: "agent", name: "streamer" });
  const run = await w.client(key.secret).createRun({ taskId: "sse-revoke" });
  const res = await fetch(`${w.server.url}/api/v1/runs/${run.runId}/events`, { headers: { authorization: `Bearer ${key.secret}` } });
  expect(res.status).toBe(200);
  const [a, b] = res.body!.tee();
  const first = await a.getReader().read();
  expect(new TextDecoder().decode(first.value)).toContain("event: ready");
  // Still open while the key is valid.
  await new Promise((r) => setTimeout(r, 800));
  await revokeApiKey(SYSTEM, key.id);
  const t0 = Date.now();
  const rest = await readUntilEnd(b, 5000);
  expect(rest.ended).toBe(true);
  expect(rest.text).toContain("event: revoked");
  expect(Date.now() - t0).toBeLessThan(3000);
});

test("console: removing the member ends the live stream (the helper with the console's session check)", async () => {
  const userId = newId("user");
  await prisma().user.create({ data: { id: userId, email: `sse.${userId.toLowerCase()}@example.test`, name: "viewer" } });
  await ensureMembership(SYSTEM, { teamId: w.a.teamId, userId, role: "viewer" });
  const user = await prisma().user.findUniqueOrThrow({ where: { id: userId } });
  const claims = { sub: userId, sv: user.sessionVersion, authAt: Math.floor(Date.now() / 1000) };
  expect((await resolveConsoleSession(claims, undefined)).kind).toBe("ok");
  const ac = new AbortController();
  const res = await sseResponse({
    req: new Request("http://localhost/api/console/events", { signal: ac.signal }),
    recheck: async () => (await resolveConsoleSession(claims, undefined)).kind === "ok",
    subscribe: (send) => controlListener().subscribe("*", () => send("event: control\ndata: {}\n\n")),
    first: ": connected\n\n",
  });
  const [a, b] = res.body!.tee();
  expect(new TextDecoder().decode((await a.getReader().read()).value)).toContain("connected");
  await removeMember(
    { type: "user", userId: w.a.users.admin, email: "a", teamId: w.a.teamId, role: "admin" },
    { teamId: w.a.teamId, userId },
  );
  const rest = await readUntilEnd(b, 5000);
  expect(rest.ended).toBe(true);
  expect(rest.text).toContain("event: revoked");
  ac.abort();
});

test("a planned end (maxMs) is announced first, so the console can tell a rotation from a failure", async () => {
  const ac = new AbortController();
  const t0 = Date.now();
  const res = await sseResponse({
    req: new Request("http://localhost/api/console/events", { signal: ac.signal }),
    recheck: async () => true,
    subscribe: async () => () => {},
    first: "retry: 2000\n: connected\n\n",
    maxMs: 600,
    beforeMaxClose: "retry: 250\nevent: rotate\ndata: {}\n\n",
  });
  const all = await readUntilEnd(res.body!, 5000);
  expect(all.ended).toBe(true);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
  // The announcement is the last thing on the stream, after everything else.
  expect(all.text.endsWith("retry: 250\nevent: rotate\ndata: {}\n\n")).toBe(true);
  expect(all.text.startsWith("retry: 2000\n: connected\n\n")).toBe(true);
  // A stream that ends because its authority is gone is not announced as a rotation.
  const revoked = await sseResponse({
    req: new Request("http://localhost/api/console/events"),
    recheck: async () => false,
    subscribe: async () => () => {},
    maxMs: 60_000,
    beforeMaxClose: "event: rotate\ndata: {}\n\n",
  });
  const r = await readUntilEnd(revoked.body!, 5000);
  expect(r.ended).toBe(true);
  expect(r.text).toContain("event: revoked");
  expect(r.text).not.toContain("event: rotate");
  ac.abort();
});
