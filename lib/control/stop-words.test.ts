import { describe, expect, it } from "vitest";
import { stopFilterWords } from "./stop-words";

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
