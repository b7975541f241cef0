// `quiesce webhook-worker`: delivers the webhook outbox (CloudEvents, HMAC-signed) as its own process;
// `npm start` runs it next to the barrier worker. Settings: QUIESCE_WEBHOOK_* (docs/integrations.md).
import type { Command } from "./types";
import { parseFlags } from "../../lib/cli/args";
import { runWebhookWorker } from "../../lib/modules/webhooks";
import { closeDbClients } from "../../lib/start/database";

export const webhookWorkerCommand: Command = {
  summary: "deliver webhook events (CloudEvents) from the outbox, with retries and dead letters",
  usage:
    "npm run quiesce -- webhook-worker [--team <teamId>] [--quiet]\n" +
    "  env: QUIESCE_WEBHOOK_RETRY_BASE_MS (1000), QUIESCE_WEBHOOK_RETRY_MAX_MS (300000), QUIESCE_WEBHOOK_MAX_ATTEMPTS (15), QUIESCE_WEBHOOK_TIMEOUT_MS (10000), QUIESCE_WEBHOOK_POLL_MS (500)",
  async run(argv) {
    const { values } = parseFlags(argv, { quiet: { type: "boolean" }, team: { type: "string" } }, { positionals: false });
    const ac = new AbortController();
    process.once("SIGTERM", () => ac.abort());
    process.once("SIGINT", () => ac.abort());
    const log = values.quiet ? () => {} : (l: string) => console.error(`[webhook-worker] ${new Date().toISOString()} ${l}`);
    log("delivering the webhook outbox");
    try {
      await runWebhookWorker(ac.signal, { teamId: values.team ?? null }, (e) => log(`pass failed: ${(e as Error).message}`));
    } finally {
      await closeDbClients();
    }
    return 0;
  },
};
