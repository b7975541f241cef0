// `quiesce barrier-worker`: the cancellation barrier engine as its own process (docs/architecture.md#, #the-cancellation-barrier).
// Talks to PostgreSQL directly (DATABASE_URL, else the embedded server), as a trusted system principal.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { runBarrierWorker, workerDefaults } from "../../lib/modules/stop";
import { closeDbClients } from "../../lib/start/database";
import { setting } from "../../lib/platform/config";
import { lineLogger } from "../../lib/platform/log";

const int = (v: string | undefined, name: string, fallback: number) => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name}: a non-negative integer (milliseconds)`);
  return n;
};

export const barrierWorkerCommand: Command = {
  summary: "run the cancellation barrier engine: settle in-flight work with providers, issue stop receipts",
  usage:
    "npm run quiesce -- barrier-worker [--claim-ms <ms>] [--poll-ms <ms>] [--local-settle-ms <ms>] [--id <name>] [--team <teamId>] [--quiet]\n" +
    "  env: QUIESCE_BARRIER_CLAIM_MS (15000), QUIESCE_BARRIER_POLL_MS (5000), QUIESCE_LOCAL_SETTLE_MS (5000)",
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        "claim-ms": { type: "string" },
        "poll-ms": { type: "string" },
        "local-settle-ms": { type: "string" },
        id: { type: "string" },
        team: { type: "string" },
        quiet: { type: "boolean" },
      },
      { positionals: false },
    );
    const d = workerDefaults();
    const claimMs = int(values["claim-ms"], "claim-ms", d.claimMs);
    if (claimMs < 500) throw new UsageError("--claim-ms: at least 500");
    const ac = new AbortController();
    const stop = () => ac.abort();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    const log = values.quiet ? () => {} : lineLogger("barrier-engine");
    try {
      await runBarrierWorker({
        workerId: values.id,
        teamId: values.team ?? setting("QUIESCE_BARRIER_TEAM") ?? null,
        claimMs,
        pollMs: int(values["poll-ms"], "poll-ms", d.pollMs),
        localSettleMs: int(values["local-settle-ms"], "local-settle-ms", d.localSettleMs),
        signal: ac.signal,
        log,
        listen: true,
      });
    } finally {
      await closeDbClients();
    }
    return 0;
  },
};
