// Revocation epochs (docs/architecture.md#data, docs/ideas.md#barriers): an integer per run that only increases. A kill bumps every
// run of the tree by one in the kill transaction, so any work stamped before the kill carries a stale
// epoch from then on. The gate compares a stamp with the highest epoch along the run's ancestry.

export const INITIAL_EPOCH = 1;

export function bumpEpoch(epoch: number): number {
  return epoch + 1;
}

/** Epochs after a kill of a whole tree: every run +1 (never anything else). */
export function killTreeEpochs<T extends { runId: string; epoch: number }>(tree: readonly T[]): T[] {
  return tree.map((r) => ({ ...r, epoch: bumpEpoch(r.epoch) }));
}

/** The epoch a caller must stamp: the highest along the ancestry (root first, ending with the run). */
export function currentEpoch(chain: readonly { epoch: number }[]): number | null {
  if (chain.length === 0) return null;
  return Math.max(...chain.map((r) => r.epoch));
}

/**
 * A child run starts at its ancestry's current epoch, so a stamp that is current for the child is never
 * stale against an ancestor (the runs API uses this when it registers a child run).
 */
export function childInitialEpoch(parentChain: readonly { epoch: number }[]): number {
  return currentEpoch(parentChain) ?? INITIAL_EPOCH;
}

export function isStaleEpoch(stamp: number, chain: readonly { epoch: number }[]): boolean {
  return chain.some((r) => stamp < r.epoch);
}

/** Epochs never go down: the only accepted replacement of `before` is a value ≥ it. */
export function acceptEpoch(before: number, after: number): number {
  return Math.max(before, after);
}
