#!/usr/bin/env node
// Plain-node entry for the stdio adapters, for MCP client configs and Codex launchers:
//   node /opt/quiesce/bin/quiesce-adapter.mjs mcp-gateway --run <id> -- <server command…>
//   node /opt/quiesce/bin/quiesce-adapter.mjs codex-bridge [--run <id>] -- codex app-server
//   node /opt/quiesce/bin/quiesce-adapter.mjs a2a-gateway --run <id> --upstream <agent URL>
//   node /opt/quiesce/bin/quiesce-adapter.mjs exec -- claude …   (the launcher `hook install` writes)
// Same commands as `npm run --silent quiesce -- …`, without npm (whose banner would corrupt the
// protocol on stdout) and without loading the rest of the CLI. tsx compiles the TypeScript in-process.
const COMMANDS = {
  "mcp-gateway": ["./commands/mcp-gateway.ts", "mcpGatewayCommand"],
  "a2a-gateway": ["./commands/a2a-gateway.ts", "a2aGatewayCommand"],
  "codex-bridge": ["./commands/codex-bridge.ts", "codexBridgeCommand"],
  exec: ["./commands/exec.ts", "execCommand"],
};
const [name, ...argv] = process.argv.slice(2);
const entry = COMMANDS[name];
if (!entry) {
  process.stderr.write(`usage: quiesce-adapter.mjs <${Object.keys(COMMANDS).join("|")}> [flags] -- <command…>\n`);
  process.exit(2);
}
try {
  const { register } = await import("tsx/esm/api");
  register();
  const mod = await import(new URL(entry[0], import.meta.url).href);
  const command = mod[entry[1]];
  process.exitCode = await command.run(argv);
} catch (err) {
  const usage = err?.name === "UsageError";
  process.stderr.write(`quiesce ${name}: ${usage ? "error: " : ""}${err?.message ?? err}\n`);
  process.exitCode = usage ? 2 : 1;
}
