import { expect, test } from "vitest";
import { openWorkEmpty, type OpenWorkCounts, type OpenWorkEmptyFilter } from "./open-work";

const counts = (unknowns: number, mine: number, nobody: number): OpenWorkCounts => ({
  unknowns,
  recoveries: 0,
  overdue: 0,
  held: { unknowns: { mine, nobody }, recoveries: { mine: 0, nobody: 0 } },
});
const f = (x: Partial<OpenWorkEmptyFilter>): OpenWorkEmptyFilter => ({ status: "open", owner: "", age: "any", ...x });

test("only the unfiltered open list of a team with nothing open says everything is proven", () => {
  expect(openWorkEmpty("unknowns", f({}), counts(0, 0, 0)).body).toContain("proven");
  expect(openWorkEmpty("unknowns", f({}), counts(2, 0, 0)).title).toBe("No open unknown outcome listed yet");
  for (const filter of [f({ owner: "me" }), f({ owner: "none" }), f({ owner: "user_x" }), f({ age: "1h" }), f({ status: "resolved" })])
    expect(JSON.stringify(openWorkEmpty("unknowns", filter, counts(0, 0, 0)))).not.toContain("proven");
});

test("assigned to me, with the team's others and unassigned", () => {
  expect(openWorkEmpty("unknowns", f({ owner: "me" }), counts(3, 0, 1))).toEqual({
    title: "Nothing assigned to you",
    body: "The team has 3 unknown outcomes open: 2 assigned to others, 1 unassigned.",
  });
  expect(openWorkEmpty("unknowns", f({ owner: "me" }), counts(0, 0, 0)).body).toBe("The team has no open unknown outcome.");
});

test("unassigned, a named member, and an age that hides newer items", () => {
  expect(openWorkEmpty("unknowns", f({ owner: "none" }), counts(1, 0, 0))).toEqual({
    title: "Nothing unassigned",
    body: "Every open unknown outcome has an owner (1 open).",
  });
  expect(openWorkEmpty("unknowns", f({ owner: "user_a", ownerName: "Ada" }), counts(2, 0, 1)).title).toBe("Nothing assigned to Ada");
  expect(openWorkEmpty("unknowns", f({ age: "1h" }), counts(2, 0, 0))).toEqual({
    title: "No open unknown outcomes older than 1 h",
    body: "Open: 2 unknown outcomes, all newer than 1 h.",
  });
  expect(openWorkEmpty("unknowns", f({ owner: "me", age: "1d" }), counts(2, 1, 0))).toEqual({
    title: "Nothing assigned to you older than 1 day",
    body: "Yours: 1 unknown outcome, all newer than 1 day.",
  });
  expect(openWorkEmpty("unknowns", f({ age: "overdue" }), counts(2, 0, 0)).title).toBe("No due time");
  expect(openWorkEmpty("unknowns", f({ status: "resolved", owner: "me" }), counts(2, 0, 0)).title).toBe(
    "No resolved unknown outcomes assigned to you",
  );
});
