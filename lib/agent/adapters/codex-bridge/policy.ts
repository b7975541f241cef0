// What the Codex bridge imposes on the client's requests so that Codex asks about every action, and
// which client requests act directly (and therefore go through the gate first). Shapes from the
// app-server v2 protocol as `codex app-server generate-ts` emits it; test/adapters/codex-protocol.test.ts
// generates the types from the pinned binary and fails when these lists or shapes drift.

/** Ask before anything that is not known read-only; the sandbox lets nothing write or reach the network unasked. */
export const APPROVAL_POLICY = "untrusted" as const;
export const THREAD_SANDBOX = "read-only" as const;
export const TURN_SANDBOX_POLICY = { type: "readOnly", networkAccess: false } as const;
/** Approvals go to the client (this bridge), never to an automatic reviewer. */
export const APPROVALS_REVIEWER = "user" as const;

/** Requests whose approval policy / sandbox the bridge replaces. */
export const POLICY_METHODS: ReadonlySet<string> = new Set(["thread/start", "thread/resume", "thread/fork", "turn/start"]);

/**
 * Client requests that act by themselves (write files, run commands, call tools, change what runs):
 * each is asked of the gate first and refused without reaching the app-server when not allowed.
 */
export const DIRECT_METHODS: ReadonlySet<string> = new Set([
  "fs/readFile",
  "fs/writeFile",
  "fs/createDirectory",
  "fs/getMetadata",
  "fs/readDirectory",
  "fs/remove",
  "fs/copy",
  "fs/watch",
  "command/exec",
  "command/exec/write",
  "thread/shellCommand",
  "thread/revert",
  "thread/inject_items",
  "thread/approveGuardianDeniedAction",
  "mcpServer/tool/call",
  "mcpServer/resource/read",
  "review/start",
  "plugin/install",
  "plugin/uninstall",
  "skills/config/write",
  "marketplace/add",
  "marketplace/remove",
  "marketplace/upgrade",
  "modelProvider/config/write",
  "config/mcpServer/reload",
  "feedback/upload",
  "config/value/write",
  "config/batchWrite",
  "externalAgentConfig/import",
  "modelProvider/default/set",
  "experimentalFeature/enablement/set",
  "skills/extraRoots/set",
  "plugin/reconcile",
  "plugin/share/checkout",
  "windowsSandbox/setupStart",
]);

/**
 * Client requests forwarded as they are: reads of Codex's own state, session bookkeeping, account and
 * model listings, and the turn controls the bridge watches itself (turn/steer on a killed thread is
 * refused; turn/interrupt only ever stops work). Every request the protocol defines is in exactly one
 * of POLICY_METHODS, DIRECT_METHODS and PASS_METHODS (test/adapters/codex-protocol.test.ts).
 */
export const PASS_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "thread/archive",
  "thread/delete",
  "thread/unsubscribe",
  "thread/name/set",
  "thread/goal/set",
  "thread/goal/get",
  "thread/goal/clear",
  "thread/metadata/update",
  "thread/attachment/add",
  "thread/attachment/list",
  "thread/attachmentOwner/list",
  "thread/attachment/remove",
  "thread/section/move",
  "thread/unarchive",
  "thread/compact/start",
  "thread/list",
  "threadSection/list",
  "threadSection/create",
  "threadSection/update",
  "threadSection/delete",
  "thread/loaded/list",
  "thread/read",
  "thread/turns/list",
  "thread/items/list",
  "skills/list",
  "hooks/list",
  "plugin/list",
  "plugin/installed",
  "plugin/read",
  "plugin/skill/read",
  "plugin/share/save",
  "plugin/share/updateTargets",
  "plugin/share/list",
  "plugin/share/delete",
  "app/read",
  "app/list",
  "app/installed",
  "fs/unwatch",
  "turn/steer",
  "turn/interrupt",
  "model/list",
  "account/gatewayOAuth/read",
  "account/gatewayOAuth/login",
  "account/gatewayOAuth/cancel",
  "modelProvider/list",
  "modelProvider/capabilities/read",
  "experimentalFeature/list",
  "permissionProfile/list",
  "mcpServer/oauth/login",
  "mcpServerStatus/list",
  "windowsSandbox/readiness",
  "account/login/start",
  "account/login/cancel",
  "account/logout",
  "account/securitySetup/read",
  "account/rateLimits/read",
  "account/rateLimitResetCredit/consume",
  "account/usage/read",
  "account/workspaceMessages/read",
  "account/sendAddCreditsNudgeEmail",
  "feedback/save",
  "command/exec/terminate",
  "command/exec/resize",
  "config/read",
  "externalAgentConfig/detect",
  "externalAgentConfig/import/recordHistory",
  "externalAgentConfig/import/readHistories",
  "configRequirements/read",
  "account/read",
  "getConversationSummary",
  "gitDiffToRemote",
  "getAuthStatus",
  "fuzzyFileSearch",
]);

/** Configuration keys a client could use to relax approvals or the sandbox through `config`. */
const RELAXING_CONFIG = /approval|sandbox|permission|reviewer|trust/i;

/** The request's params with the bridge's policy in force (a copy; the input is not changed). */
export function enforcePolicy(method: string, params: unknown): Record<string, unknown> {
  const p: Record<string, unknown> =
    params && typeof params === "object" && !Array.isArray(params) ? { ...(params as Record<string, unknown>) } : {};
  p.approvalPolicy = APPROVAL_POLICY;
  p.approvalsReviewer = APPROVALS_REVIEWER;
  if (method === "turn/start") {
    p.sandboxPolicy = { ...TURN_SANDBOX_POLICY };
  } else {
    p.sandbox = THREAD_SANDBOX;
    if (p.config && typeof p.config === "object" && !Array.isArray(p.config)) {
      p.config = Object.fromEntries(Object.entries(p.config as Record<string, unknown>).filter(([k]) => !RELAXING_CONFIG.test(k)));
    }
  }
  // A fork names its source by threadId; a path would hide which thread it continues (its lineage).
  if (method === "thread/fork" && typeof p.threadId === "string" && p.threadId) delete p.path;
  return p;
}

/**
 * Server requests that would let an action happen on the client's word (MCP elicitations, permission
 * escalations, the legacy v1 approvals, client-executed tools): the gate is asked first and may veto;
 * allowed ones go on to the client as before. The refusal each one gets (`killed`: the run is stopped).
 */
export const VETO_METHODS: Readonly<
  Record<string, (killed: boolean, why: string) => { result?: unknown; error?: { code: number; message: string } }>
> = {
  "mcpServer/elicitation/request": (killed) => ({ result: { action: killed ? "cancel" : "decline", content: null, _meta: null } }),
  "item/permissions/requestApproval": () => ({ result: { permissions: {}, scope: "turn" } }),
  execCommandApproval: (killed, why) => ({ result: { decision: killed ? "abort" : { denied: { rejection: why } } } }),
  applyPatchApproval: (killed, why) => ({ result: { decision: killed ? "abort" : { denied: { rejection: why } } } }),
  "item/tool/call": (_killed, why) => ({ error: { code: -32000, message: why } }),
};
