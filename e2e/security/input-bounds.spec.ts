// Input and transport bounds on the web app's port, over HTTP against the production build
// (docs/security/hardening.md#input): a server action's argument past the body limit is a 413 with a readable
// message (what the browser's action call throws), not Next's 500; a NUL at any depth, in an action's
// argument or in a machine API body sent to the web port, is refused naming the field; a body trickled at
// 1 byte / 2 s is cut off at the request bound `npm start` gives the web app.
import net from "node:net";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, request as playwrightRequest, test, type APIRequestContext } from "@playwright/test";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { CONFIG } from "../../lib/platform/config";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The manifest names a module relative to Turbopack's root, which may be a folder above this checkout. */
const moduleOf = (filename: string) => {
  const f = filename.replaceAll("\\", "/");
  return f.startsWith("app/") ? f : f.slice(f.indexOf("/app/") + 1);
};

/** The id of an action of the production build, by "<module>#<export>". */
function actionId(key: string): string {
  const m = JSON.parse(readFileSync(path.join(ROOT, ".next/server/server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { filename?: string; exportedName?: string }>;
  };
  const hit = Object.entries(m.node).find(([, e]) => `${moduleOf(e.filename ?? "")}#${e.exportedName}` === key);
  if (!hit) throw new Error(`no action ${key} in the build`);
  return hit[0];
}

async function signedIn(email: string): Promise<APIRequestContext> {
  const ctx = await playwrightRequest.newContext({ baseURL: e2e.baseUrl });
  const { csrfToken } = (await (await ctx.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await ctx.post("/api/auth/callback/credentials", {
    form: { email, password: e2e.password, csrfToken, json: "true" },
    maxRedirects: 0,
  });
  expect([200, 302]).toContain(res.status());
  return ctx;
}

const SET_ROLE = "app/(console)/people/actions.ts#setMemberRoleAction";
let admin: APIRequestContext;
test.beforeAll(async () => {
  admin = await signedIn(USERS.admin);
});
test.afterAll(async () => {
  await admin?.dispose();
  await closeDb();
});

/** POSTs an action as the browser does (React's reply format for plain values: the JSON of the argument list). */
async function postAction(id: string, body: string) {
  return admin.post("/people", {
    headers: { "Next-Action": id, "Content-Type": "text/plain;charset=UTF-8", Accept: "text/x-component", Origin: e2e.baseUrl },
    data: body,
    maxRedirects: 0,
  });
}

test("a 3 MB server action argument is a 413 with a readable message, not a 500; nothing changes", async () => {
  const viewer = await one<{ id: string; role: string }>(
    "SELECT u.id, m.role::text AS role FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = $1",
    [USERS.viewer],
  );
  const res = await postAction(actionId(SET_ROLE), JSON.stringify([{ userId: viewer.id, role: "operator", pad: "x".repeat(3_000_000) }]));
  expect(res.status()).toBe(413);
  // What React's action client throws for a non-Flight answer: the text of a text/plain body.
  expect(res.headers()["content-type"]).toBe("text/plain");
  expect(await res.text()).toMatch(/^input: larger than 1 MB/);
  expect((await one<{ role: string }>("SELECT role::text AS role FROM memberships WHERE user_id = $1", [viewer.id])).role).toBe(
    viewer.role,
  );
  // Just under the limit still reaches the action (its own refusal: an unknown field).
  const under = await postAction(actionId(SET_ROLE), JSON.stringify([{ userId: viewer.id, role: "operator", pad: "x".repeat(900_000) }]));
  expect(under.status()).toBe(200);
  expect(await under.text()).toContain("bad_request");
});

test("a NUL 80 levels deep in an action's argument: the refusal shape naming the field", async () => {
  let deep: unknown = "x\u0000";
  for (let i = 0; i < 80; i++) deep = [deep];
  const res = await postAction(actionId(SET_ROLE), JSON.stringify([{ userId: "u", role: "viewer", extra: deep }]));
  expect(res.status()).toBe(200);
  expect(await res.text()).toContain(`extra${".0".repeat(63)}: nested deeper than 64 levels`);
});

test("a NUL past 64 levels in complete.detail, on the web port's machine API: 400 naming the field", async () => {
  const agent = e2e.agent();
  const run = await agent.createRun({ taskId: uid("deep-nul") });
  const op = uid("op-deep");
  expect((await agent.gate(run, op, "t")).decision).toBe("allow");
  let detail: unknown = "x\u0000";
  for (let i = 0; i < 70; i++) detail = { a: detail };
  const res = await fetch(`${e2e.baseUrl}/api/v1/operations/${op}/complete`, {
    method: "POST",
    headers: { authorization: `Bearer ${e2e.keys().agent!.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ outcome: "succeeded", detail }),
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
    `body.detail${".a".repeat(63)}: nested deeper than 64 levels`,
  );
});

test("a body trickled at 1 byte / 2 s to the web app is cut off at the request bound (408)", async () => {
  test.setTimeout(90_000);
  const bound = CONFIG.QUIESCE_HTTP_REQUEST_TIMEOUT_MS.fallback;
  const { hostname, port } = new URL(e2e.baseUrl);
  const body = JSON.stringify({ taskId: "x".repeat(200) });
  const result = await new Promise<{ closedAfter: number | null; answer: string }>((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const started = Date.now();
    let answer = "";
    let sent = 0;
    const tick = setInterval(() => socket.write(body[sent++] ?? " "), 2000);
    const finish = (closed: boolean) => {
      clearInterval(tick);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedAfter: closed ? Date.now() - started : null, answer });
    };
    const giveUp = setTimeout(() => finish(false), bound + 20_000);
    socket.on("data", (d) => (answer += d.toString("latin1")));
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    socket.write(
      `POST /api/v1/runs HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${e2e.keys().agent!.secret}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
  });
  expect(result.closedAfter, `still open ${bound + 20_000} ms later`).not.toBeNull();
  expect(result.closedAfter!).toBeLessThan(bound + 5_000);
  expect(result.answer).toMatch(/^HTTP\/1\.1 408 /);
});
