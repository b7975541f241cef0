// Counted by reason, as docs/ideas.md#control-state asks ("metrics.incr('jobs.discarded_killed')"): a denied job is
// acknowledged without running and leaves a number behind, not just a log line.

/** killed → discarded_killed, stale_epoch → stale_epoch (the article's names), other denials → discarded_<reason>. */
export function counterFor(reason: string): string {
  if (reason === "stale_epoch") return "stale_epoch";
  return `discarded_${reason}`;
}

export class GuardCounters {
  private readonly map = new Map<string, number>();
  add(name: string, n = 1): void {
    this.map.set(name, (this.map.get(name) ?? 0) + n);
  }
  get(name: string): number {
    return this.map.get(name) ?? 0;
  }
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.map.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}
