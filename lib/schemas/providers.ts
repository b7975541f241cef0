// Providers: who the barrier engine asks to cancel a call and whether its effect is there
// (docs/architecture.md#the-cancellation-barrier). Registered by admins (API, CLI); where the URLs may
// point is judged by lib/modules/stop/provider-registry.ts after these shapes pass.
import { z } from "zod";
import { responseShape } from "./common";
import { registerPath } from "./registry";
import { jobUrlTemplateProblem } from "../control/provider-url";

/** The kinds a person registers; "simulated" is the demo's own, written by the seed. */
export const PROVIDER_KINDS = ["http", "mcp", "a2a"] as const;

const HttpUrl = z
  .string()
  .trim()
  .max(2000, "at most 2000 characters")
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), "an http(s) URL");

const Kind = z.enum(PROVIDER_KINDS);

/** A page of the provider's own, for people: never called by Quiesce, so any http(s) address is allowed. */
const JobUrlTemplate = z
  .string()
  .trim()
  .max(2000, "at most 2000 characters")
  .superRefine((s, ctx) => {
    const problem = jobUrlTemplateProblem(s);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const Fields = {
  /** What operations name in providerName (the gateways' --provider): unique in the team. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/, "letters, digits, _ . : - (at most 100), starting with a letter or digit"),
  kind: Kind,
  /** mcp, a2a: where the task is held (an MCP Streamable HTTP endpoint, an A2A agent's JSON-RPC URL). */
  url: HttpUrl.optional(),
  /** mcp over stdio: the server's command and arguments. Only the deployment's CLI may register one (it runs on the engine's host). */
  command: z.array(z.string().min(1, "an empty argument")).min(1, "an empty command").max(100).optional(),
  /** http: POST here to cancel. */
  cancelUrl: HttpUrl.optional(),
  /** http: the effect check; mcp, a2a: asked when the server says cancelled (docs/design/mcp-tasks.md). */
  statusUrl: HttpUrl.optional(),
  /** http: POST here to undo a completed effect (recovery). */
  compensateUrl: HttpUrl.optional(),
  timeoutMs: z.number().int().min(100).max(600_000).optional(),
  settleDeadlineMs: z.number().int().min(1_000).max(86_400_000).optional(),
  quietPeriodSeconds: z.number().int().min(0).max(86_400).optional(),
  /** Who owns undoing a completed effect (a team or a person), shown on the receipt. */
  rollbackOwner: z.string().trim().min(1).max(200).optional(),
  /** Any kind: the provider's page for one job, e.g. https://deploy.example/jobs/{providerJobId}; the console links it where an outcome needs checking. */
  jobUrl: JobUrlTemplate.optional(),
};

const Base = z.strictObject(Fields);
type Input = z.infer<typeof Base>;

/** What each kind reads: any other field would be stored and never used, so it is refused. */
const USED: Record<(typeof PROVIDER_KINDS)[number], readonly (keyof Input)[]> = {
  http: ["cancelUrl", "statusUrl", "compensateUrl"],
  mcp: ["url", "command", "statusUrl"],
  a2a: ["url", "statusUrl"],
};

function kindRules(v: Input, ctx: z.RefinementCtx): void {
  for (const f of ["url", "command", "cancelUrl", "statusUrl", "compensateUrl"] as const)
    if (v[f] !== undefined && !USED[v.kind].includes(f)) ctx.addIssue({ code: "custom", path: [f], message: `not used by kind ${v.kind}` });
  if (v.kind === "mcp" && (v.url === undefined) === (v.command === undefined))
    ctx.addIssue({ code: "custom", path: ["url"], message: "kind mcp takes url or command, exactly one" });
  if (v.kind === "a2a" && v.url === undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "required for kind a2a" });
  if (v.kind === "http" && v.cancelUrl === undefined && v.statusUrl === undefined)
    ctx.addIssue({ code: "custom", path: ["statusUrl"], message: "kind http takes cancelUrl, statusUrl or both" });
}

// Refined before it is named: a refinement is a new schema, and the name belongs to the one published.
export const CreateProviderBody = Base.superRefine(kindRules).meta({ id: "CreateProviderRequest" });
export type CreateProviderBody = z.infer<typeof CreateProviderBody>;

export const ProviderView = responseShape("Provider", {
  id: z.string(),
  name: z.string(),
  /** http, mcp, a2a, or simulated (the demo's). */
  kind: z.string(),
  url: z.string().nullable(),
  command: z.array(z.string()).nullable(),
  cancelUrl: z.string().nullable(),
  statusUrl: z.string().nullable(),
  compensateUrl: z.string().nullable(),
  timeoutMs: z.number().int(),
  settleDeadlineMs: z.number().int(),
  quietPeriodSeconds: z.number().int(),
  rollbackOwner: z.string().nullable(),
  /** The job page template ({providerJobId}, {operationId}, {runId}), or null. */
  jobUrl: z.string().nullable(),
  createdAt: z.string(),
});
export type ProviderView = z.infer<typeof ProviderView>;

export const ProviderList = responseShape("ProviderList", { providers: z.array(ProviderView) });
export type ProviderList = z.infer<typeof ProviderList>;

registerPath({
  method: "get",
  path: "/api/v1/providers",
  operationId: "listProviders",
  tags: ["providers"],
  summary: "The team's providers: who the barrier engine asks to cancel a call and whether its effect is there",
  callers: "people of the team (operator keys), any role",
  responses: { 200: { description: "the providers, by name", schema: ProviderList } },
  errors: [403],
});
registerPath({
  method: "post",
  path: "/api/v1/providers",
  operationId: "createProvider",
  tags: ["providers"],
  summary: "Register a provider of kind http, mcp (Streamable HTTP URL) or a2a",
  description:
    "Every URL must reach a public address unless QUIESCE_PROVIDER_ALLOW_PRIVATE lists it (docs/security/hardening.md#outbound-requests); a stdio command is for the deployment's CLI only (403). A name the team already has is 409.",
  callers: "admins (operator keys of an admin)",
  body: CreateProviderBody,
  responses: { 201: { description: "registered", schema: ProviderView } },
  errors: [400, 403, 409],
});
