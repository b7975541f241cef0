// `quiesce provider-sim --port <n>`: the simulated deployment provider as its own HTTP process
// (lib/modules/stop/providers/sim-server.ts). Tests, evals and the demo control each job's behaviour over HTTP.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { startSimProvider } from "../../lib/modules/stop";
import { lineLogger, logger } from "../../lib/platform/log";
import { setting } from "../../lib/platform/config";

export const providerSimCommand: Command = {
  summary: "run the simulated deployment provider (cancels cleanly, commits during cancel, status down, slow)",
  usage: "npm run quiesce -- provider-sim [--port <n>] [--host <addr>] [--quiet]   (default 127.0.0.1:$QUIESCE_PROVIDER_SIM_PORT, 4700)",
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { port: { type: "string" }, host: { type: "string" }, quiet: { type: "boolean" } },
      { positionals: false },
    );
    const port = values.port === undefined ? setting("QUIESCE_PROVIDER_SIM_PORT") : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port: an integer 0–65535");
    const log = values.quiet ? () => {} : lineLogger("provider-sim");
    const sim = await startSimProvider({ port, host: values.host ?? "127.0.0.1", log });
    logger("provider-sim").info(`listening on ${sim.url}`);
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await sim.close();
    return 0;
  },
};
