// `quiesce webhooks add|list|remove|dead|retry`: the admin path to webhook endpoints and dead letters,
// straight to the database as a system principal (the console's Webhooks page does the same for admins).
// `add` prints the secret once on stdout (details on stderr).
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { findTeamBySlug } from "../../lib/modules/members";
import type { Principal } from "../../lib/platform/auth/principal";
import { withDatabase } from "../../lib/start/database";
import { EVENT_TYPES } from "../../lib/modules/webhooks";

const SYSTEM: Principal = { type: "system", name: "cli:webhooks" };
const USAGE = [
  `npm run quiesce -- webhooks add --team <slug> --url <http(s) url> --events <type,type|*> [--secret <text>] [--json]`,
  "       npm run quiesce -- webhooks list --team <slug> [--json]",
  "       npm run quiesce -- webhooks remove <endpointId>",
  "       npm run quiesce -- webhooks rotate-secret <endpointId>        prints the new secret once",
  "       npm run quiesce -- webhooks dead --team <slug> [--json]      dead letters (delivery gave up)",
  "       npm run quiesce -- webhooks retry <deliveryId>               put a dead letter back in the queue",
  `  event types: ${EVENT_TYPES.join(", ")}`,
].join("\n");

async function teamId(slug: string): Promise<string> {
  const t = await findTeamBySlug(SYSTEM, slug);
  if (!t) throw new UsageError(`--team: no team "${slug}"`);
  return t.id;
}

export const webhooksCommand: Command = {
  summary: "manage webhook endpoints (CloudEvents) and retry dead letters",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    const dal = () => import("../../lib/modules/webhooks");
    if (sub === "add") {
      const { values } = parseFlags(
        rest,
        {
          team: { type: "string" },
          url: { type: "string" },
          events: { type: "string" },
          secret: { type: "string" },
          json: { type: "boolean" },
        },
        { positionals: false },
      );
      const slug = requireFlag(values.team, "team");
      const url = requireFlag(values.url, "url");
      const eventTypes = requireFlag(values.events, "events")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      return withDatabase(async () => {
        const e = await (
          await dal()
        ).createWebhookEndpoint(SYSTEM, { url, eventTypes, ...(values.secret ? { secret: values.secret } : {}) }, await teamId(slug));
        if (values.json) console.log(JSON.stringify(e));
        else {
          console.error(`endpoint ${e.id} → ${e.url} (${e.eventTypes.join(", ")}); the secret is shown once:`);
          console.log(e.secret);
        }
        return 0;
      });
    }
    if (sub === "list" || sub === "dead") {
      const { values } = parseFlags(rest, { team: { type: "string" }, json: { type: "boolean" } }, { positionals: false });
      const slug = requireFlag(values.team, "team");
      return withDatabase(async () => {
        const id = await teamId(slug);
        const rows =
          sub === "list"
            ? await (await dal()).listWebhookEndpoints(SYSTEM, id)
            : await (await dal()).listWebhookDeliveries(SYSTEM, "dead", id);
        if (values.json) {
          console.log(JSON.stringify(rows));
          return 0;
        }
        if (!rows.length) console.log(sub === "list" ? `no webhook endpoints for team ${slug}` : `no dead letters for team ${slug}`);
        for (const r of rows) {
          if ("eventTypes" in r) console.log(`${r.id}  ${r.url}  ${r.eventTypes.join(",")}${r.enabled ? "" : "  (disabled)"}`);
          else console.log(`${r.id}  ${r.type}  run ${r.runId}  → ${r.url}  ${r.attempts} attempts, last error: ${r.lastError ?? "-"}`);
        }
        return 0;
      });
    }
    if (sub === "rotate-secret") {
      const { positionals } = parseFlags(rest, {});
      if (positionals.length !== 1) throw new UsageError("one endpoint id");
      return withDatabase(async () => {
        const r = await (await dal()).rotateWebhookSecret(SYSTEM, positionals[0]!);
        console.error(`endpoint ${r.id} has a new secret; it is shown once:`);
        console.log(r.secret);
        return 0;
      });
    }
    if (sub === "remove" || sub === "retry") {
      const { positionals } = parseFlags(rest, {});
      if (positionals.length !== 1) throw new UsageError(sub === "remove" ? "one endpoint id" : "one delivery id");
      return withDatabase(async () => {
        if (sub === "remove") {
          await (await dal()).deleteWebhookEndpoint(SYSTEM, positionals[0]!);
          console.log(`removed ${positionals[0]}`);
        } else {
          await (await dal()).retryWebhookDelivery(SYSTEM, positionals[0]!);
          console.log(`delivery ${positionals[0]} is queued again`);
        }
        return 0;
      });
    }
    throw new UsageError(
      sub ? `unknown subcommand "webhooks ${sub}"` : "a subcommand is required: add, list, remove, rotate-secret, dead or retry",
    );
  },
};
