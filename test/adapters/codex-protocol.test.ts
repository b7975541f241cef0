// The Codex bridge's protocol shapes against the types the pinned `codex` binary generates
// (`codex app-server generate-ts`): every client request is classified (policy / gated / passed), the
// approval and refusal values the bridge sends exist, and the fields it sets are still there. A new
// Codex version that adds a request or renames a field fails here until the bridge says what to do.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { APPROVAL_METHODS } from "../../lib/agent/adapters/codex-bridge/bridge";
import {
  APPROVAL_POLICY,
  APPROVALS_REVIEWER,
  DIRECT_METHODS,
  PASS_METHODS,
  POLICY_METHODS,
  THREAD_SANDBOX,
  TURN_SANDBOX_POLICY,
  VETO_METHODS,
} from "../../lib/agent/adapters/codex-bridge/policy";
import { ensureClient, type ClientBinary } from "./real/clients";

let codex: ClientBinary | null = null;
let dir = "";
beforeAll(async () => {
  const c = await ensureClient("codex");
  if (!c.available) return;
  codex = c;
  dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-codex-ts-"));
  await promisify(execFile)(c.bin, ["app-server", "generate-ts", "--out", dir], {
    timeout: 120_000,
    env: { ...process.env, CODEX_HOME: dir },
  });
}, 600_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ts = (f: string) => readFileSync(path.join(dir, f), "utf8");
const methods = (f: string) => [...ts(f).matchAll(/"method": "([^"]+)"/g)].map((m) => m[1]!);
/** The top-level field names of a generated object type (comments removed). */
const fields = (f: string) =>
  new Set(
    [
      ...ts(f)
        .replace(/\/\*\*[\s\S]*?\*\//g, "")
        .matchAll(/(\w+)\??: /g),
    ].map((m) => m[1]!),
  );

test("every client request is classified exactly once: policy imposed, gated, or passed", (ctx) => {
  if (!codex) return ctx.skip();
  const all = methods("ClientRequest.ts");
  expect(all.length).toBeGreaterThan(50);
  const unclassified = all.filter((m) => !POLICY_METHODS.has(m) && !DIRECT_METHODS.has(m) && !PASS_METHODS.has(m));
  expect(unclassified, "new client requests: add each to DIRECT_METHODS or PASS_METHODS").toEqual([]);
  const twice = all.filter((m) => [POLICY_METHODS, DIRECT_METHODS, PASS_METHODS].filter((s) => s.has(m)).length > 1);
  expect(twice).toEqual([]);
  const gone = [...POLICY_METHODS, ...DIRECT_METHODS, ...PASS_METHODS].filter((m) => !all.includes(m));
  expect(gone, "requests the bridge names that this Codex no longer has").toEqual([]);
});

test("the server requests the bridge answers or vetoes exist", (ctx) => {
  if (!codex) return ctx.skip();
  const server = methods("ServerRequest.ts");
  for (const m of [...Object.keys(APPROVAL_METHODS), ...Object.keys(VETO_METHODS)]) expect(server, m).toContain(m);
});

test("the values and fields the bridge sends are in the generated types", (ctx) => {
  if (!codex) return ctx.skip();
  expect(ts("v2/AskForApproval.ts")).toContain(`"${APPROVAL_POLICY}"`);
  expect(ts("v2/SandboxMode.ts")).toContain(`"${THREAD_SANDBOX}"`);
  expect(ts("v2/ApprovalsReviewer.ts")).toContain(`"${APPROVALS_REVIEWER}"`);
  expect(ts("v2/SandboxPolicy.ts")).toMatch(new RegExp(`"type": "${TURN_SANDBOX_POLICY.type}", networkAccess: boolean`));
  for (const f of ["v2/ThreadStartParams.ts", "v2/ThreadResumeParams.ts", "v2/ThreadForkParams.ts"]) {
    const got = fields(f);
    for (const k of ["approvalPolicy", "approvalsReviewer", "sandbox", "config"]) expect(got, `${f} ${k}`).toContain(k);
  }
  const turn = fields("v2/TurnStartParams.ts");
  for (const k of ["threadId", "approvalPolicy", "approvalsReviewer", "sandboxPolicy"]) expect(turn, k).toContain(k);
  // A fork names its source only by threadId (the bridge's lineage depends on it; it drops a path).
  expect(fields("v2/ThreadForkParams.ts")).toContain("threadId");
  expect(fields("v2/ThreadForkParams.ts")).not.toContain("path");
  for (const f of ["v2/CommandExecutionApprovalDecision.ts", "v2/FileChangeApprovalDecision.ts"]) {
    for (const d of ["accept", "decline", "cancel"]) expect(ts(f), `${f} ${d}`).toContain(`"${d}"`);
  }
  for (const k of ["threadId", "turnId", "itemId"]) expect(fields("v2/CommandExecutionRequestApprovalParams.ts"), k).toContain(k);
  expect(ts("v2/McpServerElicitationAction.ts")).toContain('"decline"');
  expect(ts("ReviewDecision.ts")).toContain('"abort"');
  expect(fields("v2/ThreadForkResponse.ts")).toContain("thread");
  expect(fields("v2/Thread.ts")).toContain("forkedFromId");
  for (const k of ["threadId", "turnId"]) expect(fields("v2/TurnInterruptParams.ts"), k).toContain(k);
});
