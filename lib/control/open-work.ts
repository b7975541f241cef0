// Open work (docs/console.md#open-work): a team's unknown outcomes and recovery items, the managers' view.
// The age and owner filters as data and pure functions, so the module's queries, the page and its counts
// read a filter the same way.

export const OPEN_WORK_AGES = ["any", "1h", "1d", "overdue"] as const;
export type OpenWorkAge = (typeof OPEN_WORK_AGES)[number];

export const OPEN_WORK_AGE_LABELS: Record<OpenWorkAge, string> = {
  any: "any age",
  "1h": "over 1 h",
  "1d": "over 1 day",
  overdue: "overdue",
};

const AGE_MS: Record<"1h" | "1d", number> = { "1h": 3_600_000, "1d": 86_400_000 };

/** An item "over 1 h" old was created at or before this time; null: age does not filter by creation. */
export function createdAtOrBefore(age: OpenWorkAge, now: Date): Date | null {
  return age === "1h" || age === "1d" ? new Date(now.getTime() - AGE_MS[age]) : null;
}

/**
 * Owner filter: "me", "none" (nobody holds it) or a member's user id, resolved to the assignee a query
 * matches — undefined: anyone; null: nobody.
 */
export function ownerAssignee(owner: string | undefined, me: string | null): string | null | undefined {
  if (!owner) return undefined;
  if (owner === "none") return null;
  if (owner === "me") return me ?? undefined;
  return owner;
}

/** The URL parameters the page reads, in a stable order, so the server's first render and the client's query key agree. */
export const OPEN_WORK_PARAMS = ["status", "owner", "age"] as const;
export function openWorkQueryString(get: (k: string) => string | null | undefined): string {
  return new URLSearchParams(OPEN_WORK_PARAMS.flatMap((k) => (get(k) ? [[k, get(k)!]] : []))).toString();
}

export interface OpenWorkCounts {
  /** open reconciliations: unknown outcomes nobody has resolved */
  unknowns: number;
  /** recovery items still owed (open, in progress, failed) */
  recoveries: number;
  /** recovery items still owed past their due time */
  overdue: number;
}

/** The number the navigation's badge shows and the page's header totals: one sum, one place. */
export function openWorkTotal(c: OpenWorkCounts): number {
  return c.unknowns + c.recoveries;
}
