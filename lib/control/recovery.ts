// Recovery: an effect that completed before the stop, and what was done about it (docs/evidence.md#recovery).
// Pure rules: the states and who may move an item between them, the owner an item opens with, what a
// `rolled_back` needs as proof, what blocks a restart, and the receipt's recovery sentence.

export const RECOVERY_STATES = ["open", "in_progress", "rolled_back", "accepted", "failed"] as const;
export type RecoveryState = (typeof RECOVERY_STATES)[number];

/** Still owed: a restart waits for every one of these to end. */
export const UNSETTLED_RECOVERY_STATES = ["open", "in_progress", "failed"] as const satisfies readonly RecoveryState[];
export const FINAL_RECOVERY_STATES = ["rolled_back", "accepted"] as const satisfies readonly RecoveryState[];

export function isUnsettledRecovery(state: RecoveryState): boolean {
  return (UNSETTLED_RECOVERY_STATES as readonly string[]).includes(state);
}

/**
 * The moves a person may make. `rolled_back` by a person needs a note and evidence (the receipt then
 * says a person did it); through the provider it needs a later effect check that answered absent
 * (mayMarkRolledBack). A final state is never left: a new fact is a new item's business, not a rewrite.
 */
const MOVES: Record<RecoveryState, readonly RecoveryState[]> = {
  open: ["in_progress", "rolled_back", "accepted", "failed"],
  in_progress: ["rolled_back", "accepted", "failed", "open"],
  failed: ["in_progress", "rolled_back", "accepted"],
  rolled_back: [],
  accepted: [],
};

export function mayMove(from: RecoveryState, to: RecoveryState): boolean {
  return MOVES[from].includes(to);
}

/** Who may change an item: its owner or a manager/admin — the rule of reconciliations (open work has one). */
export { mayResolveReconciliation as mayChangeRecovery } from "./reconciliation";

/** The rollback owner an item opens with: the effect's, else its provider's, else the team's default person. */
export function recoveryOwnerLabel(effectOwner: string | null, providerOwner: string | null, teamDefault: string | null): string | null {
  return effectOwner || providerOwner || teamDefault || null;
}

export interface EffectCheck {
  effect: "present" | "absent" | "unavailable";
  checkedAt: string;
}

/**
 * A provider-side rollback is proven only by an effect check made after the compensation was asked for
 * that answered `absent`. Accepted-but-still-present is `failed`; no answer stays `in_progress`.
 */
export function compensationVerdict(compensatedAt: string, check: EffectCheck | null): "rolled_back" | "failed" | "in_progress" {
  if (!check || check.checkedAt < compensatedAt) return "in_progress";
  if (check.effect === "absent") return "rolled_back";
  if (check.effect === "present") return "failed";
  return "in_progress";
}

export interface RecoveryFact {
  operationId: string;
  state: RecoveryState;
  /** "provider" when the provider's check proved it, "person" when someone recorded it. */
  settledBy: "provider" | "person" | null;
  providerName: string | null;
  /** Who made the last change (a person's email, else the actor). */
  by: string | null;
  at: string | null;
  rollbackOwner?: string | null;
  /** The person who owns it now (email). */
  assignee?: string | null;
  note?: string | null;
  evidence?: string | null;
  verifiedAt?: string | null;
  verifiedEffect?: string | null;
}

/** What blocks a restart of a stopped tree: not quiet yet, or a recovery item still owed. */
export function restartBlockers(decision: string | null, items: readonly RecoveryFact[]): string[] {
  const out: string[] = [];
  if (decision !== "stopped_and_quiet")
    out.push(decision ? `the stop receipt says ${decision}, not stopped_and_quiet` : "no stop receipt yet");
  for (const i of items) if (isUnsettledRecovery(i.state)) out.push(`recovery of ${i.operationId} is ${i.state}`);
  return out;
}

/**
 * The receipt's recovery sentence, from the items alone, so the summary and the listed items cannot
 * disagree: "2 effects completed before the stop: 1 rolled back (verified by deploy-sim at …), 1 accepted by …".
 */
export function recoverySentence(items: readonly RecoveryFact[]): string | null {
  if (items.length === 0) return null;
  const parts: string[] = [];
  const rolled = items.filter((i) => i.state === "rolled_back");
  const byProvider = rolled.filter((i) => i.settledBy === "provider");
  const byPerson = rolled.filter((i) => i.settledBy !== "provider");
  if (byProvider.length)
    parts.push(
      `${byProvider.length} rolled back (verified by ${names(byProvider.map((i) => `${i.providerName ?? "its provider"} at ${i.at}`))})`,
    );
  if (byPerson.length) parts.push(`${byPerson.length} rolled back (recorded by ${names(byPerson.map((i) => `${i.by} at ${i.at}`))})`);
  const accepted = items.filter((i) => i.state === "accepted");
  if (accepted.length) parts.push(`${accepted.length} accepted by ${names(accepted.map((i) => `${i.by} at ${i.at}`))}`);
  for (const s of UNSETTLED_RECOVERY_STATES) {
    const n = items.filter((i) => i.state === s).length;
    if (n) parts.push(`${n} ${s.replace("_", " ")}`);
  }
  const noun = items.length === 1 ? "effect" : "effects";
  return `${items.length} ${noun} completed before the stop: ${parts.join(", ")}.`;
}

function names(xs: string[]): string {
  return [...new Set(xs)].join("; ");
}
