// What the stdio adapters (mcp-gateway, codex-bridge) share on the command line: their own flags
// before `--`, the wrapped program after it, and the control plane's address and key — all turned
// into a UsageError (exit 2, nothing started) when wrong.
import { UsageError } from "./args";
import { adapterConfig, AdapterConfigError, type AdapterConfig } from "../agent/adapters/common/config";
import { makeClient } from "../agent/adapters/common/control";
import { setting } from "../platform/config";

export function splitWrappedCommand(argv: string[], what: string): { flags: string[]; command: string; args: string[] } {
  const sep = argv.indexOf("--");
  if (sep < 0 || sep === argv.length - 1) throw new UsageError(`the ${what} goes after \`--\``);
  const [command, ...args] = argv.slice(sep + 1);
  return { flags: argv.slice(0, sep), command: command!, args };
}

export function adapterSetup(flags: { url?: string; key?: string }): { cfg: AdapterConfig; client: ReturnType<typeof makeClient> } {
  let cfg: AdapterConfig;
  try {
    cfg = adapterConfig(flags);
  } catch (err) {
    if (err instanceof AdapterConfigError) throw new UsageError(err.message);
    throw err;
  }
  return { cfg, client: makeClient(cfg, setting("QUIESCE_GATE_TIMEOUT_MS")) };
}
