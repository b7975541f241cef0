// Hook input parsing is the hook's first fail-closed boundary: whatever arrives on stdin, the parser
// either returns a well-formed event or throws HookInputError naming the field — never anything else
// (anything else would be a crash, and Claude Code lets a call through when a hook crashes).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { HookInputError, parseHookInput } from "./input";

const pre = {
  session_id: "s",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "ls" },
  tool_use_id: "toolu_1",
  cwd: "/w",
};

describe("parseHookInput", () => {
  test("the documented PreToolUse input parses, extra fields are kept", () => {
    const p = parseHookInput(JSON.stringify({ ...pre, agent_id: "a1", future_field: 1 }));
    expect(p).toMatchObject({ hook_event_name: "PreToolUse", tool_use_id: "toolu_1", agent_id: "a1", future_field: 1 });
  });

  test("each required PreToolUse field, when missing, is named", () => {
    for (const field of ["session_id", "tool_name", "tool_use_id"] as const) {
      const { [field]: _drop, ...rest } = pre;
      expect(() => parseHookInput(JSON.stringify(rest))).toThrow(new RegExp(`^${field}:`));
    }
  });

  test("SubagentStart needs agent_id; unknown events need only session_id", () => {
    expect(() => parseHookInput(JSON.stringify({ session_id: "s", hook_event_name: "SubagentStart" }))).toThrow(/agent_id/);
    expect(parseHookInput(JSON.stringify({ session_id: "s", hook_event_name: "Stop" }))).toEqual({
      hook_event_name: "other",
      event: "Stop",
      session_id: "s",
    });
  });

  test("event names that are Object.prototype members are ordinary unknown events", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(parseHookInput(JSON.stringify({ session_id: "s", hook_event_name: name }))).toEqual({
        hook_event_name: "other",
        event: name,
        session_id: "s",
      });
    }
  });

  test("any input at all: a parsed event or a HookInputError, nothing else", () => {
    const anyText = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .record(
          {
            ...Object.fromEntries(Object.keys(pre).map((k) => [k, fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.jsonValue())])),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        try {
          const p = parseHookInput(text);
          expect(typeof p.session_id).toBe("string");
          expect(p.session_id.length).toBeGreaterThan(0);
        } catch (err) {
          expect(err).toBeInstanceOf(HookInputError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
