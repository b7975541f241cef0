// Recovery (docs/evidence.md#recovery): GET /api/v1/recoveries, POST /api/v1/recoveries/{recoveryId}/{assign,start,record}.
import { z } from "zod";
import { RECOVERY_STATES } from "../control/recovery";
import { Id, IsoTime, requestShape, responseShape } from "./common";
import { registerPath } from "./registry";

const PEOPLE = "console users and operator keys: managers/admins, or the item's owner for start and record (machine keys: 403)";

export const RecoveryStateSchema = z.enum(RECOVERY_STATES);

export const RecoveryView = responseShape("Recovery", {
  id: z.string(),
  teamId: z.string(),
  barrierId: z.string(),
  runId: z.string(),
  operationId: z.string(),
  tool: z.string(),
  providerName: z.string().nullable(),
  providerJobId: z.string().nullable(),
  /** the rollback owner named by the effect or its provider */
  rollbackOwner: z.string().nullable(),
  assignee: z.object({ userId: z.string(), email: z.string(), name: z.string() }).nullable(),
  assignedBy: z.string().nullable(),
  assignedAt: IsoTime.nullable(),
  state: RecoveryStateSchema,
  /** who proved the final state: the provider's effect check, or a person's record */
  settledBy: z.enum(["provider", "person"]).nullable(),
  note: z.string().nullable(),
  evidence: z.string().nullable(),
  changedBy: z.string().nullable(),
  changedAt: IsoTime.nullable(),
  /** the provider declares a compensation endpoint: `start` can ask it to undo the effect */
  compensable: z.boolean(),
  compensationRequestedAt: IsoTime.nullable(),
  compensationResponse: z.string().nullable(),
  verifiedAt: IsoTime.nullable(),
  verifiedEffect: z.enum(["present", "absent", "unavailable"]).nullable(),
  dueAt: IsoTime,
  overdue: z.boolean(),
  createdAt: IsoTime,
});
export type RecoveryView = z.infer<typeof RecoveryView>;

export const RecoveriesQuery = z.strictObject({
  state: z.union([z.enum(["open", "all"]), RecoveryStateSchema]).default("open"),
  barrierId: Id.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

export const AssignRecoveryBody = requestShape("AssignRecoveryRequest", { assigneeUserId: Id });

const Note = z.string().trim().min(1, "a note is required").max(4000);
export const RecordRecoveryBody = requestShape("RecordRecoveryRequest", {
  state: z.enum(["in_progress", "rolled_back", "accepted", "failed"]),
  note: Note,
  /** what shows it: a link, a ticket, a command's output */
  evidence: z.string().trim().min(1, "evidence is required").max(4000),
});
export type RecordRecoveryInput = z.infer<typeof RecordRecoveryBody>;

registerPath({
  method: "get",
  path: "/api/v1/recoveries",
  operationId: "listRecoveries",
  tags: ["barrier"],
  summary: "Recovery items of the team: effects a stop found completed, with owner, state and due time (default: still owed)",
  callers: "every key of the team",
  query: RecoveriesQuery,
  responses: { 200: { description: "items, soonest due first", schema: z.object({ recoveries: z.array(RecoveryView) }) } },
  errors: [400],
});
registerPath({
  method: "post",
  path: "/api/v1/recoveries/{recoveryId}/assign",
  operationId: "assignRecovery",
  tags: ["barrier"],
  summary: "Hand a recovery item to a member of the team",
  callers: PEOPLE,
  body: AssignRecoveryBody,
  responses: { 200: { description: "assigned", schema: RecoveryView } },
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "post",
  path: "/api/v1/recoveries/{recoveryId}/start",
  operationId: "startRecovery",
  tags: ["barrier"],
  summary: "Ask the provider to undo the effect, then verify against its effect check (rolled_back only when it answers absent)",
  callers: PEOPLE,
  responses: {
    200: { description: "the item after the provider's answer: rolled_back, failed, or still in_progress", schema: RecoveryView },
  },
  errors: [403, 404, 409],
});
registerPath({
  method: "post",
  path: "/api/v1/recoveries/{recoveryId}/record",
  operationId: "recordRecovery",
  tags: ["barrier"],
  summary: "Record what a person did about the effect, with a note and evidence (the receipt says a person did)",
  callers: PEOPLE,
  body: RecordRecoveryBody,
  responses: { 200: { description: "recorded", schema: RecoveryView } },
  errors: [400, 403, 404, 409],
});
