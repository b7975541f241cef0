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
  /** of the open ones, who holds them: what an empty filtered list says the filter hides */
  held: Record<"unknowns" | "recoveries", OwnerSplit>;
}

/** The number the navigation's badge shows and the page's header totals: one sum, one place. */
export function openWorkTotal(c: OpenWorkCounts): number {
  return c.unknowns + c.recoveries;
}

/** Of a list's open items, how many the viewer holds and how many nobody holds (the rest: other people). */
export interface OwnerSplit {
  mine: number;
  nobody: number;
}

/** The filters an empty list is explained by; `ownerName` names a member chosen by id. */
export interface OpenWorkEmptyFilter {
  status: "open" | "resolved" | "all";
  owner: string;
  ownerName?: string | null;
  age: OpenWorkAge;
}

const NOUNS = { unknowns: ["unknown outcome", "unknown outcomes"], recoveries: ["recovery item", "recovery items"] } as const;
const AGE_SPANS: Record<"1h" | "1d", string> = { "1h": "1 h", "1d": "1 day" };

/**
 * What an empty list says, true for its filters: only the unfiltered open list of a team with nothing open
 * may say everything is settled; a filtered one says what the filter hides, from the team's counts.
 */
export function openWorkEmpty(
  list: "unknowns" | "recoveries",
  f: OpenWorkEmptyFilter,
  counts: OpenWorkCounts,
): { title: string; body: string } {
  const [one, many] = NOUNS[list];
  const n = (k: number) => `${k} ${k === 1 ? one : many}`;
  if (list === "unknowns" && f.age === "overdue")
    return { title: "No due time", body: "Unknown outcomes have no due time; choose another age to see them." };
  const open = counts[list];
  const { mine, nobody } = counts.held[list];
  const older = f.age === "any" ? "" : f.age === "overdue" ? " overdue" : ` older than ${AGE_SPANS[f.age]}`;
  const member = f.owner && f.owner !== "me" && f.owner !== "none";
  const whose =
    f.owner === "me"
      ? " assigned to you"
      : f.owner === "none"
        ? " unassigned"
        : member
          ? ` assigned to ${f.ownerName ?? "this member"}`
          : "";
  if (f.status !== "open") return { title: `No ${f.status === "resolved" ? "resolved " : ""}${many}${whose}${older}`, body: "" };
  if (!f.owner && f.age === "any") {
    if (open > 0) return { title: `No open ${one} listed yet`, body: `The team has ${n(open)} open; the list is catching up.` };
    return list === "unknowns"
      ? { title: "Nothing to reconcile", body: "Every settled effect is proven: no unknown outcome is open." }
      : { title: "No recovery owed", body: "No stop has found a completed effect that still needs undoing or accepting." };
  }
  const title = f.owner ? `Nothing${whose}${older}` : `No open ${many}${older}`;
  if (open === 0) return { title, body: `The team has no open ${one}.` };
  if (f.age !== "any") {
    // The owner filter's items, whatever their age: the age filter emptied the list, so each is newer (or not yet due).
    const matching = f.owner === "me" ? mine : f.owner === "none" ? nobody : member ? null : open;
    const rest = f.age === "overdue" ? "none of them past due" : `all newer than ${AGE_SPANS[f.age]}`;
    if (matching === null) return { title, body: "Choose any age to see newer ones." };
    if (matching > 0)
      return { title, body: `${f.owner === "me" ? "Yours" : f.owner === "none" ? "Unassigned" : "Open"}: ${n(matching)}, ${rest}.` };
  }
  const others = open - mine - nobody;
  if (f.owner === "none") return { title, body: `Every open ${one} has an owner (${open} open).` };
  if (f.owner === "me") return { title, body: `The team has ${n(open)} open: ${others} assigned to others, ${nobody} unassigned.` };
  return { title, body: `The team has ${n(open)} open, ${nobody ? `${nobody} of them unassigned` : "each with an owner"}.` };
}
