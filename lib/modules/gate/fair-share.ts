// Fair share in the gate's batcher (GateBatcher in ./index.ts, docs/gate.md#fair-share): waiting calls
// are queued per team and a batch is filled round-robin across the teams, one call each in turn, so one
// team's flood cannot push another team's calls behind it; and while another team waits, one team has
// at most `cap` calls in flight, its further calls waiting while the others' go ahead. Alone, a team is
// not capped: the cap shares statements, it never leaves one idle.
import "server-only";
import { pool } from "../../platform/db/pool";

interface Group<T> {
  queue: T[];
  inFlight: number;
}

/** Calls waiting for a gate statement, per group (a team), served round-robin. */
export class FairQueue<T extends { since: number }> {
  private groups = new Map<string, Group<T>>();
  /** Groups with calls waiting; the one served last goes to the back. */
  private ring: string[] = [];
  private readonly cap: number;

  /** `cap` 0: no limit on a group's calls in flight. */
  constructor(cap: number) {
    this.cap = cap > 0 ? cap : Infinity;
  }

  push(group: string, item: T): void {
    let g = this.groups.get(group);
    if (!g) this.groups.set(group, (g = { queue: [], inFlight: 0 }));
    if (g.queue.length === 0) this.ring.push(group);
    g.queue.push(item);
  }

  /** Another group has a call waiting that its cap lets go: only then does `key`'s cap bind. */
  private contended(key: string): boolean {
    return this.ring.some((k) => {
      const g = this.groups.get(k)!;
      return k !== key && g.queue.length > 0 && g.inFlight < this.cap;
    });
  }

  private room(key: string, g: Group<T>): number {
    return this.contended(key) ? Math.max(0, this.cap - g.inFlight) : Infinity;
  }

  /** Calls that could go in a statement now (their group is below its cap, or nobody else waits). */
  eligible(): number {
    let n = 0;
    for (const key of this.ring) {
      const g = this.groups.get(key)!;
      n += Math.min(g.queue.length, this.room(key, g));
    }
    return n;
  }

  /** When the longest-waiting call that could go now arrived (undefined: none could). */
  oldestEligible(): number | undefined {
    let oldest: number | undefined;
    for (const key of this.ring) {
      const g = this.groups.get(key)!;
      if (this.room(key, g) > 0 && (oldest === undefined || g.queue[0]!.since < oldest)) oldest = g.queue[0]!.since;
    }
    return oldest;
  }

  /** When the longest-waiting call of any group arrived, capped or not. */
  oldest(): number | undefined {
    let oldest: number | undefined;
    for (const key of this.ring) {
      const since = this.groups.get(key)!.queue[0]!.since;
      if (oldest === undefined || since < oldest) oldest = since;
    }
    return oldest;
  }

  size(): number {
    let n = 0;
    for (const key of this.ring) n += this.groups.get(key)!.queue.length;
    return n;
  }

  /**
   * Up to `max` calls for one statement: one from each group below its cap in ring order, again and
   * again, each group moving to the back of the ring once served (so the next batch starts with the
   * groups this one reached last). Calls `drop` says are stale are handed to it instead. Returns each
   * call with its group, counted in flight until `landed`.
   */
  take(max: number, drop: (item: T) => boolean): { group: string; item: T }[] {
    const out: { group: string; item: T }[] = [];
    for (let served = true; served && out.length < max;) {
      served = false;
      for (const key of [...this.ring]) {
        if (out.length >= max) break;
        const g = this.groups.get(key)!;
        while (g.queue.length > 0 && drop(g.queue[0]!)) g.queue.shift();
        if (g.queue.length > 0 && this.room(key, g) > 0) {
          out.push({ group: key, item: g.queue.shift()! });
          g.inFlight++;
          served = true;
        }
        this.ring.splice(this.ring.indexOf(key), 1);
        if (g.queue.length > 0) this.ring.push(key);
        else if (g.inFlight === 0) this.groups.delete(key);
      }
    }
    return out;
  }

  /** A statement returned: its calls are no longer in flight. */
  landed(calls: { group: string }[]): void {
    for (const { group } of calls) {
      const g = this.groups.get(group);
      if (!g) continue;
      g.inFlight--;
      if (g.inFlight <= 0 && g.queue.length === 0) this.groups.delete(group);
    }
  }

  /** Removes every waiting call `drop` says is stale (the budget sweep), whatever its group's cap. */
  sweep(drop: (item: T) => boolean): void {
    for (const key of [...this.ring]) {
      const g = this.groups.get(key)!;
      g.queue = g.queue.filter((item) => !drop(item));
      if (g.queue.length > 0) continue;
      this.ring.splice(this.ring.indexOf(key), 1);
      if (g.inFlight === 0) this.groups.delete(key);
    }
  }
}

// ── which team a gate call is for ───────────────────────────────────────────────────────────────────

/** Key hash → "team:<id>". A key never changes team, so an entry never goes stale; it only orders calls. */
const teamsByKey = new Map<string, string>();
const lookingUp = new Set<string>();
const MAX_KNOWN_KEYS = 10_000;
const MAX_LOOKUPS = 4;

/**
 * The group of a gate call: its key's team. The gate authenticates inside its one statement, so the
 * batcher knows only the key's hash: the team is looked up once per key, beside the gate (on the main
 * pool, a few at a time), and until it is known the call is grouped by its key alone. Unknown hashes
 * are not remembered (a bad key is refused by the gate statement and throttled per address).
 */
export function teamOfKeyHash(keyHash: string): string {
  const known = teamsByKey.get(keyHash);
  if (known) return known;
  if (lookingUp.size < MAX_LOOKUPS && !lookingUp.has(keyHash)) {
    lookingUp.add(keyHash);
    pool()
      .query<{ team_id: string }>(`SELECT team_id FROM api_keys WHERE secret_hash = $1`, [keyHash])
      .then((r) => {
        const team = r.rows[0]?.team_id;
        if (!team) return;
        if (teamsByKey.size >= MAX_KNOWN_KEYS) teamsByKey.delete(teamsByKey.keys().next().value!);
        teamsByKey.set(keyHash, `team:${team}`);
      })
      .catch(() => undefined)
      .finally(() => lookingUp.delete(keyHash));
  }
  return `key:${keyHash}`;
}
