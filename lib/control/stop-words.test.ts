import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  DECISION_WORDS,
  OPERATION_STATE_WORDS,
  PHASE_WORDS,
  RECONCILIATION_STATUS_WORDS,
  RESOLUTION_WORDS,
  RUNG_STATUS_WORDS,
  RUNG_WORDS,
  SETTLED_WORDS,
  stopFilterWords,
  whyUnknownWords,
} from "./stop-words";
import { BARRIER_PHASES } from "./barrier";
import { OPERATION_STATES, SETTLED_STATES } from "./types";
import { RECONCILIATION_STATUSES } from "./reconciliation";
import { RUNG_IDS } from "./evidence/model";
import { UNCERTAIN_CAUSES } from "./settlement";
import { GLOSSARY_BY_TERM } from "../../components/glossary";

describe("stopFilterWords", () => {
  it("says the filter as a sentence, never as JSON", () => {
    expect(stopFilterWords({})).toBe("every run of the team");
    expect(stopFilterWords({ harness: ["claude_code"], taskPrefix: "release-" })).toBe(
      "harness is Claude Code and task starts with `release-`",
    );
    expect(stopFilterWords({ harness: ["codex", "mcp", "custom"], status: ["active", "paused"] })).toBe(
      "harness is Codex, MCP or custom and status is active or paused",
    );
    expect(stopFilterWords({ runIds: ["run_a", "run_b", "run_c"] })).toBe("3 runs named by id");
    expect(stopFilterWords({ runIds: ["run_a"] })).toBe("run run_a");
    expect(stopFilterWords({ agent: ["a-1"], createdAfter: "2026-12-01T00:00:00.000Z" })).toBe(
      "agent is `a-1` and created at or after 2026-12-01T00:00:00.000Z",
    );
  });
});

// Each set of states with the enum it must cover.
const SETS: [string, Record<string, string>, readonly string[]][] = [
  ["phase", PHASE_WORDS, BARRIER_PHASES],
  ["decision", DECISION_WORDS, ["stopped_and_quiet", "stop_incomplete"]],
  ["rung", RUNG_WORDS, RUNG_IDS],
  ["rung status", RUNG_STATUS_WORDS, ["done", "pending", "uncertain"]],
  ["settled state", SETTLED_WORDS, SETTLED_STATES],
  ["operation state", OPERATION_STATE_WORDS, OPERATION_STATES],
  ["reconciliation status", RECONCILIATION_STATUS_WORDS, RECONCILIATION_STATUSES],
  ["resolution", RESOLUTION_WORDS, ["effect_present", "effect_absent"]],
];

describe("the stop vocabulary", () => {
  it.each(SETS)("every %s has exactly one label, and no two share it", (_, words, values) => {
    expect(Object.keys(words).sort()).toEqual([...values].sort());
    const labels = Object.values(words).map((w) => w.toLowerCase());
    expect(new Set(labels).size).toBe(labels.length);
  });

  it("no label is snake_case, and none says complete (a word that sits badly beside incomplete)", () => {
    for (const [, words] of SETS)
      for (const label of Object.values(words)) {
        expect(label).not.toMatch(/_/);
        expect(label).not.toMatch(/\b(in)?complete\b/i);
        expect(label.trim()).toBe(label);
        expect(label.length).toBeGreaterThan(0);
      }
  });

  it("every label the console shows is a glossary term", () => {
    for (const [set, words] of SETS)
      for (const [value, label] of Object.entries(words)) {
        expect(GLOSSARY_BY_TERM.get(label.toLowerCase()), `${set} ${value}: "${label}" has no glossary entry`).toBeDefined();
      }
  });

  it("why an outcome is unknown: one plain sentence for any facts, the barrier's and the queue's alike", () => {
    fc.assert(
      fc.property(
        fc.record({
          settled: fc.boolean(),
          hasProvider: fc.boolean(),
          providerResponse: fc.constantFrom(null, "accepted", "rejected", "unsupported", "unreachable"),
          cause: fc.constantFrom(null, ...UNCERTAIN_CAUSES),
        }),
        (f) => {
          const why = whyUnknownWords(f);
          expect(why).not.toMatch(/_/);
          expect(why).toMatch(/^[a-z]/);
          if (!f.settled) expect(why).toMatch(/^its executor gave up on the call and could not say whether it took effect( \(.+\))?$/);
        },
      ),
    );
  });
});
