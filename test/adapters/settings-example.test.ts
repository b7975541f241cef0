// The shipped managed-settings example must register the hook for every event the adapter handles,
// with the bundled single-file hook in the fail-closed `|| exit 2` form (not `npm run`, whose banner
// would corrupt stdout; test/adapters/hook-install.test.ts runs that form), and a Claude Code
// timeout comfortably above the hook's own deadline (a timed-out hook is treated as allow).
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { ROOT } from "./support";

test("examples/claude-code/settings.json registers every handled event, fail-closed", () => {
  const s = JSON.parse(readFileSync(path.join(ROOT, "examples/claude-code/settings.json"), "utf8"));
  const deadlineMs = Number(s.env.QUIESCE_HOOK_TIMEOUT_MS);
  expect(s.env.QUIESCE_URL).toMatch(/^https?:\/\//);
  for (const event of ["SessionStart", "SubagentStart", "PreToolUse", "PostToolUse", "PostToolUseFailure"]) {
    const groups = s.hooks[event] as { matcher?: string; hooks: { type: string; command: string; timeout: number }[] }[];
    expect(groups, event).toHaveLength(1);
    if (event.startsWith("P")) expect(groups[0]!.matcher).toBe("*");
    const h = groups[0]!.hooks[0]!;
    expect(h).toMatchObject({ type: "command" });
    expect(h.command).toMatch(/^node \S+\/quiesce-hook\.cjs claude-code \|\| exit 2$/);
    expect(h.timeout * 1000).toBeGreaterThanOrEqual(deadlineMs * 5); // seconds vs ms: room for node startup
  }
});
