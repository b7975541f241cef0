// One vocabulary for the console: the receipt's decision, the barrier's phase
// and the run's activity each have one set of words on every page; snake_case stays in downloads.
export const DECISION_WORDS = { stopped_and_quiet: "Stopped and quiet", stop_incomplete: "Not yet quiet" } as const;

export const PHASE_WORDS: Record<string, string> = {
  revoking: "revoking leases",
  settling: "settling effects",
  quiet: "waiting out the quiet period",
  complete: "receipt issued",
};
