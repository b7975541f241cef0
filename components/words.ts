// Words for approvals and durations. A stop's states (phase, decision, ladder, settlements, reconciliations)
// have their one vocabulary in lib/control/stop-words.ts, which the evidence sentences use too.

/** Why an approval was voided, in words: what stopped the agent it was about. */
export const VOID_CAUSE_WORDS: Record<string, string> = {
  killed: "the run was killed",
  paused: "the run was paused",
  epoch_changed: "the run's epoch changed",
  lease_revoked: "its lease was revoked",
  lease_expired: "its lease expired",
  fleet_kill: "a fleet kill stopped the run",
  fleet_pause: "a fleet pause held the run",
};

export const APPROVAL_STATE_WORDS: Record<string, string> = {
  pending: "Waiting for an answer",
  approved: "Approved",
  denied: "Denied",
  expired: "Expired",
  voided: "Voided",
};

/** Who may answer an approval by role (the rule may also name people): its role and every role above it. */
export const APPROVER_WORDS: Record<string, string> = {
  operator: "an operator, manager or admin",
  manager: "a manager or admin",
  admin: "an admin",
};

/** A duration in seconds as people say it: "15 min", "1 h 30 min", "45 s". */
export function seconds(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const m = Math.floor((s % 3600) / 60);
  return m ? `${Math.floor(s / 3600)} h ${m} min` : `${s / 3600} h`;
}
