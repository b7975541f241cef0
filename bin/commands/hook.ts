// `quiesce hook claude-code`: the Claude Code hook command (lib/agent/adapters/claude-code). Never throws:
// any failure is exit 2, because Claude Code lets a tool call through when a hook exits 1 or crashes.
// `quiesce hook install`: builds the single-file hook and writes the settings that run it fail-closed.
import os from "node:os";
import path from "node:path";
import type { Command } from "./types";
import { emit, runClaudeCodeHook } from "../../lib/agent/adapters/claude-code/main";
import { parseHookArgv } from "../../lib/agent/adapters/claude-code/entry";
import { parseFlags, UsageError } from "../../lib/cli/args";

export const hookCommand: Command = {
  summary: "harness hook: `hook claude-code` gates Claude Code tool calls; `hook install` writes the bundled hook + settings",
  usage: [
    "quiesce hook claude-code [--managed <file>]   (env: QUIESCE_URL, QUIESCE_API_KEY[_FILE], QUIESCE_HOOK_TIMEOUT_MS, QUIESCE_HOOK_STATE_DIR)",
    "quiesce hook install [--dir <dir>] [--settings <file>] [--managed <file>] [--timeout <seconds>] [--url <url>] [--key-file <file>]",
  ].join("\n"),
  async run(argv) {
    if (argv[0] === "install") return install(argv.slice(1));
    try {
      const opts = parseHookArgv(argv);
      if (!opts) {
        process.stderr.write(`quiesce hook: unknown arguments "${argv.join(" ")}"; usage: quiesce hook claude-code [--managed <file>]\n`);
        return 2;
      }
      const code = emit(await runClaudeCodeHook(process.stdin, process.env, opts));
      // Exit now: an idle keep-alive socket must not hold the process past Claude Code's hook timeout.
      process.exit(code);
    } catch (err) {
      process.stderr.write(`quiesce hook: ${(err as Error)?.message ?? err}; blocking (fail closed)\n`);
      return 2;
    }
  },
};

async function install(argv: string[]): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      dir: { type: "string" },
      settings: { type: "string" },
      managed: { type: "string" },
      timeout: { type: "string" },
      url: { type: "string" },
      "key-file": { type: "string" },
    },
    { positionals: false },
  );
  if (values.url !== undefined) {
    try {
      const u = new URL(values.url);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
    } catch {
      throw new UsageError(`--url: an http(s) URL, got "${values.url}"`);
    }
  }
  const timeoutSeconds = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutSeconds !== undefined && (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 5 || timeoutSeconds > 600)) {
    throw new UsageError(`--timeout: whole seconds between 5 and 600, got "${values.timeout}"`);
  }
  const { installHook } = await import("../../lib/cli/hook-install");
  const r = await installHook({
    dir: values.dir ?? path.join(os.homedir(), ".quiesce", "hook"),
    settings: values.settings,
    managed: values.managed,
    timeoutSeconds,
    url: values.url,
    keyFile: values["key-file"],
  });
  process.stdout.write(
    `hook:     ${r.hookPath}\nsettings: ${r.settingsPath}\ncommand:  ${r.command}\n` +
      `launch:   ${r.launcherPath} [claude arguments…]   (Claude Code under \`quiesce exec\`: its processes freeze on pause and end on kill)\n`,
  );
  return 0;
}
