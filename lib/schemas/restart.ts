// Restart on settled ground (docs/evidence.md#restart): POST /api/v1/runs/{runId}/restart, GET /api/v1/runs/{runId}/ledger.
import { z } from "zod";
import { IsoTime, OperationStateSchema, responseShape } from "./common";
import { ReasonBody } from "./control";
import { registerPath } from "./registry";

export const LedgerEntry = z
  .object({
    operationId: z.string(),
    /** the old run it ran under */
    runId: z.string(),
    tool: z.string(),
    state: OperationStateSchema,
    /** already_applied: its effect happened (do not repeat it); free_to_run: it never ran; unsettled: neither is known */
    outcome: z.enum(["already_applied", "free_to_run", "unsettled"]),
    effectReceipt: z.object({ effectReceiptId: z.string(), providerOperationId: z.string().nullable(), committedAt: IsoTime }).nullable(),
  })
  .meta({ id: "LedgerEntry" });

export const LedgerView = responseShape("OperationLedger", {
  runId: z.string(),
  restartedFrom: z.string().nullable(),
  restartedFromDigest: z.string().nullable(),
  operations: z.array(LedgerEntry),
});
export type LedgerView = z.infer<typeof LedgerView>;

export const RestartView = responseShape("RestartedRun", {
  runId: z.string(),
  rootRunId: z.string(),
  epoch: z.number().int(),
  restartedFrom: z.string(),
  /** the digest of the old tree's final stop receipt (stopped_and_quiet) */
  restartedFromDigest: z.string(),
  ledger: z.array(LedgerEntry),
});
export type RestartView = z.infer<typeof RestartView>;

registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/restart",
  operationId: "restartRun",
  tags: ["control"],
  summary: "Start a killed root again as a new root run for the same task, on settled ground",
  description:
    "Allowed only when the old tree's latest stop receipt is stopped_and_quiet and no recovery item is open, in progress or failed; otherwise 409 naming what blocks it. The new run keeps the old run's holder, names the old run and the receipt's digest, and inherits the old tree's operation ledger.",
  callers: "operator keys whose user may resume runs (machine keys: 403)",
  body: ReasonBody,
  responses: { 201: { description: "the new run and the ledger it inherits", schema: RestartView } },
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "get",
  path: "/api/v1/runs/{runId}/ledger",
  operationId: "getLedger",
  tags: ["runs"],
  summary: "The operation ledger a restarted run inherits: each old operationId with its settled outcome",
  callers: "every key of the team",
  responses: { 200: { description: "the ledger (empty for a run that is not a restart)", schema: LedgerView } },
  errors: [404],
});
