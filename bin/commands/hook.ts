// `quiesce hook claude-code`: the Claude Code hook command (lib/adapters/claude-code). Never throws:
// any failure is exit 2, because Claude Code lets a tool call through when a hook exits 1 or crashes.
import type { Command } from "./types";
import { emit, runClaudeCodeHook } from "../../lib/adapters/claude-code/main";

export const hookCommand: Command = {
  summary: "harness hook: `hook claude-code` gates Claude Code tool calls (reads hook JSON on stdin)",
  usage: "quiesce hook claude-code   (env: QUIESCE_URL, QUIESCE_API_KEY, QUIESCE_HOOK_TIMEOUT_MS, QUIESCE_HOOK_STATE_DIR)",
  async run(argv) {
    try {
      if (argv.length !== 1 || argv[0] !== "claude-code") {
        process.stderr.write(`quiesce hook: unknown harness "${argv.join(" ")}"; usage: quiesce hook claude-code\n`);
        return 2;
      }
      const code = emit(await runClaudeCodeHook(process.stdin));
      // Exit now: an idle keep-alive socket must not hold the process past Claude Code's hook timeout.
      process.exit(code);
    } catch (err) {
      process.stderr.write(`quiesce hook: ${(err as Error)?.message ?? err}; blocking (fail closed)\n`);
      return 2;
    }
  },
};
