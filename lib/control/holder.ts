// Who holds a piece of work (docs/security/authorization.md#holders). Same team is not enough: a run is held by the
// key that registered it or any ancestor run, and by whoever presents one of those runs' leases (the
// capability a holder passes to a worker); an operation also by the key that registered it. Only a
// holder reports on, completes, observes, heartbeats, registers children under or finishes the work.
export type HoldingCaller = { type: "key"; keyId: string } | { type: "user" } | { type: "system" };

export interface HoldingFacts {
  /** The run's path, root first, ending with the run. */
  path: readonly string[];
  /** holder_key_id of each run of the path that could be read (run id → key id or null). */
  holders: ReadonlyMap<string, string | null>;
  /** For an operation: the key that registered it (or asked the gate that created it). */
  operationKey?: string | null;
  /** The run of the lease the caller presented, when that lease exists in the caller's team. */
  presentedLeaseRun?: string | null;
}

export function holds(caller: HoldingCaller, f: HoldingFacts): boolean {
  if (caller.type === "system") return true;
  // A person acts through control actions (pause, kill, resolve), never as a run's executor.
  if (caller.type !== "key") return false;
  if (f.operationKey != null && f.operationKey === caller.keyId) return true;
  if (f.path.some((id) => f.holders.get(id) === caller.keyId)) return true;
  return f.presentedLeaseRun != null && f.path.includes(f.presentedLeaseRun);
}
