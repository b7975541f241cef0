// `quiesce api [--port <n>] [--host <addr>]`: the machine API (every /api/v1 route, the agents' hot path
// among them) in a process of its own, without Next: the same route modules, OpenAPI document and
// auth, on a plain node:http server. Why it exists: docs/deploy.md#the-api-process.
import path from "node:path";
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { startApiServer } from "../../lib/api/node-server";
import { logger } from "../../lib/platform/log";
import { setting } from "../../lib/platform/config";

export const apiCommand: Command = {
  summary: "serve the machine API (/api/v1: gate, admit, heartbeat, complete, events …) without Next",
  usage: "npm run quiesce -- api [--port <n>] [--host <addr>]   (default 127.0.0.1:$QUIESCE_API_PORT)",
  async run(argv) {
    const { values } = parseFlags(argv, { port: { type: "string" }, host: { type: "string" } }, { positionals: false });
    const port = values.port === undefined ? setting("QUIESCE_API_PORT") : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port: an integer 0–65535");
    const log = logger("api-server");
    const server = await startApiServer({
      port,
      host: values.host ?? "127.0.0.1",
      appDir: path.resolve(import.meta.dirname, "../../app"),
      keyCacheMs: setting("QUIESCE_API_KEY_CACHE_MS"),
      onError: (message, err) => log.error({ err }, message),
    });
    log.info(`listening on ${server.url}`);
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await server.close();
    return 0;
  },
};
