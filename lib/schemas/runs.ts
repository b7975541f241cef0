// Runs and child runs: register, read, list (docs/architecture.md#the-wire-contract).
import { z } from "zod";
import { BreakerSchema, Id, IsoTime, LifecycleSchema, requestShape, responseShape } from "./common";
import { registerPath, registeredOnce } from "./registry";

import { DEFAULT_LEASE_TTL_SECONDS, MAX_LEASE_TTL_SECONDS } from "../control/lease";

// A child never gets more than its parent has left (lib/control/lease clamps it).
export { DEFAULT_LEASE_TTL_SECONDS, MAX_LEASE_TTL_SECONDS };

export const NativeIds = z.strictObject({
  sessionId: z.string().min(1).max(300).optional(),
  agentId: z.string().min(1).max(300).optional(),
  threadId: z.string().min(1).max(300).optional(),
  turnId: z.string().min(1).max(300).optional(),
});

export const HarnessInput = z.enum(["claude_code", "claude-code", "codex", "mcp", "custom"]);

export const CreateRunBody = requestShape("CreateRunRequest", {
  taskId: z.string().trim().min(1).max(200),
  title: z.string().max(500).optional(),
  harness: HarnessInput.optional(),
  parentRunId: Id.optional(),
  parentLeaseId: Id.optional(),
  scopes: z.array(z.string().trim().min(1).max(200)).max(100).optional(),
  leaseTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_LEASE_TTL_SECONDS)
    .describe(
      `the lease's idle window in seconds (default ${DEFAULT_LEASE_TTL_SECONDS}): every intact gate call renews it, up to the team's maximum lifetime; a child's is clamped to its parent's`,
    )
    .optional(),
  native: NativeIds.optional(),
  forkedFrom: z
    .strictObject({
      runId: Id.optional(),
      sessionId: z.string().min(1).max(300).optional(),
      threadId: z.string().min(1).max(300).optional(),
    })
    .describe(
      "the session (native session id), thread (native thread id) or run this one was resumed or forked from: when that run is " +
        "known to this team, the new run becomes its child (its kill, pause and breaker apply) and records the lineage; a killed source answers 409",
    )
    .optional(),
  /** Marks the run (and every child registered under it) as a drill run (`quiesce drill`, docs/evals.md). */
  drill: z
    .boolean()
    .describe("register a drill run: kept, but marked so consoles and reports can set it apart; children inherit it")
    .optional(),
});
export type CreateRunBody = z.infer<typeof CreateRunBody>;

export const CreateRunResponse = responseShape("CreateRunResponse", {
  runId: z.string(),
  leaseId: z.string(),
  epoch: z.number().int(),
  validUntil: IsoTime,
  parentRunId: z.string().nullable(),
  rootRunId: z.string(),
  scopes: z.array(z.string()),
  /** false when an idempotent registration returned the existing run (status 200). */
  created: z.boolean(),
});
export type CreateRunResponse = z.infer<typeof CreateRunResponse>;

export const LeaseView = responseShape("Lease", {
  /** A lease id is a capability: shown only to a holder of the run (docs/security/authorization.md#holders), null otherwise. */
  leaseId: z.string().nullable(),
  parentLeaseId: z.string().nullable(),
  scopes: z.array(z.string()),
  validUntil: IsoTime,
  revokedAt: IsoTime.nullable(),
  revokedBy: z.string().nullable(),
  createdAt: IsoTime,
});
export type Lease = z.infer<typeof LeaseView>;

export const RunSummary = responseShape("RunSummary", {
  runId: z.string(),
  taskId: z.string(),
  title: z.string().nullable(),
  harness: z.string(),
  parentRunId: z.string().nullable(),
  rootRunId: z.string(),
  depth: z.number().int(),
  lifecycle: LifecycleSchema,
  breaker: BreakerSchema,
  epoch: z.number().int(),
  createdAt: IsoTime,
  lastHeartbeatAt: IsoTime.nullable(),
  /** Registered by a drill (`drill: true`, or under a drill run). */
  isDrill: z.boolean(),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunView = RunSummary.extend({
  lifecycleChangedAt: IsoTime,
  lifecycleChangedBy: z.string().nullable(),
  lifecycleReason: z.string().nullable(),
  breakerChangedAt: IsoTime,
  breakerChangedBy: z.string().nullable(),
  breakerReason: z.string().nullable(),
  breakerFailures: z.number().int(),
  native: z.object({
    sessionId: z.string().nullable(),
    agentId: z.string().nullable(),
    threadId: z.string().nullable(),
    turnId: z.string().nullable(),
  }),
  lastNativeState: z.string().nullable(),
  children: z.array(RunSummary),
  leases: z.array(LeaseView),
}).meta({ id: "Run" });
export type RunView = z.infer<typeof RunView>;

export const ListRunsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** Opaque: the nextCursor of the previous page. */
  cursor: z.string().min(1).max(500).optional(),
  lifecycle: LifecycleSchema.optional(),
  /** A run id, root run id or native session id (exact), or part of a task id or title (any case). */
  q: z.string().trim().min(1).max(200).optional(),
  /** Only the children of this run. */
  parentRunId: Id.optional(),
  /** "true": only root runs. */
  rootsOnly: z.enum(["true", "false"]).optional(),
});
export type ListRunsQuery = z.infer<typeof ListRunsQuery>;

export const ListRunsResponse = responseShape("RunList", {
  runs: z.array(RunSummary),
  nextCursor: z.string().nullable(),
});
export type ListRunsResponse = z.infer<typeof ListRunsResponse>;

registerPath({
  method: "post",
  path: "/api/v1/runs",
  operationId: "createRun",
  tags: ["runs"],
  summary: "Register a run or a child run and get its lease",
  description:
    "A child lease never outlives or out-scopes its parent's. With native.sessionId (and agentId), registering the same native identity again returns the existing run (200, created=false).",
  callers: "agent, gateway keys",
  body: CreateRunBody,
  responses: registeredOnce(CreateRunResponse, "already registered (idempotent)"),
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "get",
  path: "/api/v1/runs",
  operationId: "listRuns",
  tags: ["runs"],
  summary: "List the team's runs, newest first",
  callers: "any key",
  query: ListRunsQuery,
  responses: { 200: { description: "a page of runs", schema: ListRunsResponse } },
  errors: [400],
});
registerPath({
  method: "get",
  path: "/api/v1/runs/{runId}",
  operationId: "getRun",
  tags: ["runs"],
  summary: "Read a run with its children and leases",
  callers: "any key",
  responses: { 200: { description: "the run", schema: RunView } },
  errors: [404],
});
// The stream itself is served by app/api/v1/runs/[runId]/events (lib/agent/abort, lib/agent/sdk/events.ts).
registerPath({
  method: "get",
  path: "/api/v1/runs/{runId}/events",
  operationId: "runEvents",
  tags: ["runs"],
  summary: "Server-sent events for the run's tree (event: ready | control | resync)",
  description:
    "`event: ready` once the server listens (nothing committed afterwards is missed); `event: control` with a ControlEvent JSON for every control change of the tree; `event: resync` when events may have been lost. Events are wake-up calls, not authority: re-check with a heartbeat or the gate.",
  callers: "any key of the run's team",
  responses: { 200: { description: "text/event-stream", contentType: "text/event-stream", schema: z.string() } },
  errors: [404],
});

/** A supervisor's report on the run it holds (docs/environment.md): the first marks the run supervised. */
export const EnvironmentReportBody = requestShape("EnvironmentReportRequest", {
  mechanism: z.enum(["cgroup2", "cgroup1", "pidns", "pgroup"]),
  /** The supervisor's grace between SIGTERM and SIGKILL: its report is waited for that long, plus the kill's own bound. */
  graceMs: z.number().int().min(0).max(3_600_000),
  container: z.string().min(1).max(1000).optional(),
  liveProcesses: z.number().int().min(0).max(10_000_000).optional(),
  frozen: z.boolean().optional(),
  /** A caller that did not register the run presents one of its leases (docs/security/authorization.md#holders). */
  leaseId: Id.optional(),
});
export type EnvironmentReportBody = z.infer<typeof EnvironmentReportBody>;

export const RunEnvironmentResponse = responseShape("RunEnvironment", {
  runId: z.string(),
  supervised: z.literal(true),
  mechanism: z.string(),
  weakest: z.boolean(),
  graceMs: z.number().int(),
  supervisedAt: IsoTime,
  container: z.string().nullable(),
  liveProcesses: z.number().int().nullable(),
  frozen: z.boolean(),
  statusAt: IsoTime.nullable(),
});

registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/environment",
  operationId: "reportEnvironment",
  tags: ["runs"],
  summary: "Mark the run supervised (the first report) and report its container's live status",
  description:
    "Sent by `quiesce exec` before the command starts, and on pause and resume. Only the run's holder (its registering key, or a caller presenting one of its leases). 409 when the run is already killed and was not marked, or when the mechanism differs from the one it was marked with.",
  callers: "agent, gateway keys",
  body: EnvironmentReportBody,
  responses: { 200: { description: "the run's environment", schema: RunEnvironmentResponse } },
  errors: [400, 403, 404, 409],
});

/** What stops a run now (docs/environment.md#pause-resume-kill): what its supervisor follows. */
export const RunControlView = responseShape("RunControl", {
  runId: z.string(),
  /** killed: the run, an ancestor or a live kill scope; paused: the same for a pause; the gate's rule. */
  control: z.enum(["normal", "paused", "killed"]),
  /** What the run's and its ancestors' own lifecycles say, without the scopes. */
  lifecycle: z.enum(["normal", "paused", "killed"]),
  /** The live fleet stops (stop scopes) behind `control`: a kill's, or a pause's. */
  stopIds: z.array(z.string()),
});
export type RunControlView = z.infer<typeof RunControlView>;

registerPath({
  method: "get",
  path: "/api/v1/runs/{runId}/control",
  operationId: "getRunControl",
  tags: ["runs"],
  summary: "What stops the run now: its own and its ancestors' lifecycles and the fleet stops that match it",
  description:
    "Read by `quiesce exec` on every control event of the run's stream, so that a fleet pause freezes its process tree, lifting it thaws, and a fleet kill empties it. The same rule as the gate: a scope applies when the run or an ancestor matches; a kill outranks a pause.",
  callers: "any key",
  responses: { 200: { description: "the run's control", schema: RunControlView } },
  errors: [404],
});

/** A person's check of an unknown environment: the tree is gone (docs/design/environment-evidence.md). */
export const ResolveEnvironmentBody = requestShape("ResolveEnvironmentRequest", {
  resolution: z.literal("verified_empty"),
  evidence: z.string().trim().min(1, "evidence is required").max(4000),
});
export const ResolveEnvironmentResponse = responseShape("ResolveEnvironmentResponse", {
  runId: z.string(),
  resolvedAt: IsoTime,
  resolvedBy: z.string(),
  receiptVersions: z.array(z.object({ barrierId: z.string(), version: z.number().int() })),
});

registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/environment/resolve",
  operationId: "resolveEnvironment",
  tags: ["runs"],
  summary: "Close an unknown environment: a person checked the machine and the run's process tree is gone",
  description:
    "Only the environment's owner or a manager/admin. 409 when the run has no supervisor, or its environment is not unknown or already resolved. Every covering barrier's receipt gets its next version, naming the person and the note.",
  callers: "operator keys",
  body: ResolveEnvironmentBody,
  responses: { 200: { description: "resolved", schema: ResolveEnvironmentResponse } },
  errors: [400, 403, 404, 409],
});
