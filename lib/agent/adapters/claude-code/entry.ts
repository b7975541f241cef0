// The entry point of the bundled hook (`quiesce hook install` builds it into ONE JavaScript file with
// esbuild: no tsx, no node_modules at run time). Usage, as Claude Code runs it:
//   node /opt/quiesce/quiesce-hook.cjs claude-code [--managed <managed.json>] || exit 2
// Anything that goes wrong here exits 2 (block); the `|| exit 2` covers what cannot run this file at
// all (node missing: 127, file missing: 1), because Claude Code lets a tool call through on any other
// non-zero code.
import { emit, runClaudeCodeHook } from "./main";

const fail = (msg: string): never => {
  process.stderr.write(`quiesce hook: ${msg}; blocking (fail closed)\n`);
  process.exit(2);
};

export function parseHookArgv(argv: readonly string[]): { managed?: string } | null {
  if (argv[0] !== "claude-code") return null;
  if (argv.length === 1) return {};
  if (argv.length === 3 && argv[1] === "--managed" && argv[2]) return { managed: argv[2] };
  return null;
}

export async function main(argv: readonly string[]): Promise<never> {
  process.on("uncaughtException", (err) => fail(err?.message ?? String(err)));
  process.on("unhandledRejection", (err) => fail((err as Error)?.message ?? String(err)));
  const opts = parseHookArgv(argv);
  if (!opts) return fail("usage: quiesce-hook.cjs claude-code [--managed <file>]");
  try {
    // fd 0, not process.stdin: creating the stdin stream costs a fresh process a few ms (main.ts).
    const code = emit(await runClaudeCodeHook(0, process.env, opts));
    // Exit now: an idle keep-alive socket must not hold the process past Claude Code's hook timeout.
    return process.exit(code);
  } catch (err) {
    return fail((err as Error)?.message ?? String(err));
  }
}
