// Inputs of the operator console: server actions and the console's JSON read endpoints.
// Shared field rules come from ./common so the console and the machine API refuse the same things.
import { z } from "zod";
import { KEY_KINDS, ROLES } from "../control/types";
import { Id, PG_INT_MAX, Reason } from "./common";
import { StopFilterSchema } from "./stops";
import { DecideApprovalBody, DryRunBody, EnablePolicyBody } from "./policy";
import { OPEN_WORK_AGES } from "../control/open-work";

const page = z.preprocess(
  (v) => (v === "" || v === null || v === undefined ? undefined : Number(v)),
  z.number().int().min(1).max(100_000).optional(),
);

/** The runs list's JSON endpoint's own parameters (its filters are read by parseRunsQuery, lib/schemas/runs-list). */
export const RunsApiExtra = z.object({
  /** an expanded row: the direct children of this run */
  parent: z.preprocess((v) => (v === "" ? undefined : v), Id.optional()),
  pageSize: z.preprocess((v) => (v === "" || v == null ? undefined : Number(v)), z.number().int().min(5).max(100).optional()),
});

/** A page of a run's timeline (lib/modules/runs/console/timeline.ts). */
export const TimelineQuery = z.object({
  cursor: z.preprocess((v) => (v === "" ? undefined : v), z.string().max(1000).optional()),
  limit: z.preprocess((v) => (v === "" || v == null ? undefined : Number(v)), z.number().int().min(5).max(200).optional()),
});

/** Saved views of the runs list (lib/modules/runs/console/saved-views.ts). */
export const SavedViewCreateInput = z.strictObject({
  name: z.string().trim().min(1, "a name is required").max(80, "at most 80 characters"),
  query: z.string().max(2000),
});
export const SavedViewDeleteInput = z.strictObject({ viewId: Id });
/** The runs list's query string, for "select all N matching" as a list of run ids. */
export const MatchingRunIdsInput = z.strictObject({ query: z.string().max(2000) });

export const AuditQuery = z.object({
  action: z.string().trim().max(100).optional(),
  actor: z.string().trim().max(200).optional(),
  target: z.string().trim().max(200).optional(),
  page,
});

/** The open-work page's filters, as its URL carries them (lib/control/open-work.ts). */
const blank = (v: unknown) => (v === "" || v == null ? undefined : v);
export const OpenWorkQuery = z.object({
  status: z.preprocess(blank, z.enum(["open", "resolved", "all"]).optional()),
  /** "me", "none" (nobody holds it) or a member's user id */
  owner: z.preprocess(blank, z.union([z.enum(["me", "none"]), Id]).optional()),
  age: z.preprocess(blank, z.enum(OPEN_WORK_AGES).optional()),
});
export type OpenWorkQuery = z.infer<typeof OpenWorkQuery>;

export const ReceiptVersionQuery = z.object({
  version: z.preprocess((v) => (v === "" || v == null ? undefined : Number(v)), z.number().int().min(1).max(PG_INT_MAX).optional()),
});

export const RunControlInput = z.strictObject({ runId: Id, reason: Reason });
export const BreakerControlInput = z.strictObject({ runId: Id, action: z.enum(["trip", "reset"]), reason: Reason });
/** Lifting a pause scope from its page. */
export const LiftStopInput = z.strictObject({ stopId: Id, reason: Reason });

export const AssignInput = z.strictObject({ reconciliationId: Id, assigneeUserId: Id });
export const ResolveInput = z.strictObject({
  reconciliationId: Id,
  resolution: z.enum(["effect_present", "effect_absent"]),
  evidence: z.string().trim().min(3, "describe the evidence you checked").max(4000),
});

export const CreateKeyInput = z.strictObject({
  name: z.string().trim().min(1, "a name is required").max(100),
  kind: z.enum(KEY_KINDS),
  userId: z.preprocess((v) => (v === "" ? undefined : v), Id.optional()),
  expiresInDays: z.preprocess((v) => (v === "" || v == null ? undefined : Number(v)), z.number().int().min(1).max(3650).optional()),
});
export const RevokeKeyInput = z.strictObject({ keyId: Id });
export const MemberRefInput = z.strictObject({ userId: Id });
export const MemberRoleInput = z.strictObject({ userId: Id, role: z.enum(ROLES) });
export const MemberDisabledInput = z.strictObject({ userId: Id, disabled: z.boolean() });
export const SwitchTeamInput = z.strictObject({ slug: z.string().trim().min(1).max(100) });

/** A fleet stop from the console (docs/fleet-stop.md): selected runs, all matching the list's filters, or the whole team. */
export const FleetStopInput = z.strictObject({
  action: z.enum(["pause", "kill"]),
  filter: StopFilterSchema.default({}),
  reason: Reason,
  dryRun: z.boolean().default(false),
  /** "Stop everything" (an empty filter) must be confirmed by typing the team's name. */
  confirmTeam: z.string().max(200).optional(),
});

/**
 * A console password: at least 8 characters, at most 72 bytes (bcrypt ignores the rest; lib/platform/auth/password.ts
 * refuses rather than truncates). The current one is only compared, so only bounded.
 */
export const NewPassword = z
  .string()
  .min(8, "at least 8 characters")
  .refine((s) => Buffer.byteLength(s, "utf8") <= 72, "at most 72 bytes (UTF-8)");
export const ChangePasswordInput = z.strictObject({
  currentPassword: z.string().min(1, "your current password is required").max(200),
  newPassword: NewPassword,
});

/** Recovery items (docs/evidence.md#recovery) from the console. */
export const RecoveryIdInput = z.strictObject({ recoveryId: Id });
export const AssignRecoveryInput = z.strictObject({ recoveryId: Id, assigneeUserId: Id });
export const RecordRecoveryInput = z.strictObject({
  recoveryId: Id,
  state: z.enum(["in_progress", "rolled_back", "accepted", "failed"]),
  note: z.string().trim().min(1, "say what was done").max(4000),
  evidence: z.string().trim().min(1, "name the evidence: a link, a ticket, a command's output").max(4000),
});

/** Answering an approval from its card: the API's body and the approval's id. */
export const DecideApprovalInput = z.strictObject({ approvalId: Id, ...DecideApprovalBody.shape });
/** A new policy version as the editor's JSON text (the module parses it as a PolicyDocument and names the bad field). */
export const SavePolicyInput = z.strictObject({ document: z.string().trim().min(1, "the policy is empty").max(200_000) });
export const DryRunPolicyInput = z.strictObject({ version: z.number().int().min(1).max(PG_INT_MAX), ...DryRunBody.shape });
export const EnablePolicyInput = z.strictObject({ ...EnablePolicyBody.shape });
