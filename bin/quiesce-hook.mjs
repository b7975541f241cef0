#!/usr/bin/env node
// Plain-node entry for the Claude Code hook, for managed settings:
//   "command": "node /opt/quiesce/bin/quiesce-hook.mjs claude-code"
// It loads the TypeScript adapter through tsx's loader API in this same process (no npm banner on
// stdout, no extra process). Anything that goes wrong — tsx missing, a load error, an unknown
// harness — exits 2, never 1: Claude Code lets a tool call through on any other non-zero code.
const fail = (msg) => {
  process.stderr.write(`quiesce hook: ${msg}; blocking (fail closed)\n`);
  process.exit(2);
};
process.on("uncaughtException", (err) => fail(err?.message ?? String(err)));
process.on("unhandledRejection", (err) => fail(err?.message ?? String(err)));

if (process.argv[2] !== "claude-code" || process.argv.length !== 3) fail(`usage: quiesce-hook.mjs claude-code`);
try {
  const { register } = await import("tsx/esm/api");
  register();
  const { runClaudeCodeHook, emit } = await import("../lib/agent/adapters/claude-code/main.ts");
  const code = emit(await runClaudeCodeHook(process.stdin));
  process.exit(code);
} catch (err) {
  fail(err?.message ?? String(err));
}
