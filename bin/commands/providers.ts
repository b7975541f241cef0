// `quiesce providers list|add`: the deployment's own path to the providers the barrier engine asks
// (docs/adapters/mcp-gateway.md#registering-a-provider), straight to the database as a system principal. The same
// write as the API's, without its address judgement: whoever runs this already holds the database.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { findTeamBySlug } from "../../lib/modules/members";
import type { Principal } from "../../lib/platform/auth/principal";
import { withDatabase } from "../../lib/start/database";
import { PROVIDER_KINDS } from "../../lib/schemas/providers";

const SYSTEM: Principal = { type: "system", name: "cli:providers" };
const USAGE = [
  "npm run quiesce -- providers list --team <slug> [--json]",
  "       npm run quiesce -- providers add --team <slug> --name <name> --kind mcp --url <http(s) url> [options]",
  "       npm run quiesce -- providers add --team <slug> --name <name> --kind mcp [options] -- <server command…>   (stdio)",
  "       npm run quiesce -- providers add --team <slug> --name <name> --kind a2a --url <agent JSON-RPC url> [options]",
  "       npm run quiesce -- providers add --team <slug> --name <name> --kind http --cancel-url <url> --status-url <url> [--compensate-url <url>] [options]",
  "  options: --status-url <url> (mcp, a2a: the effect check)  --quiet-period <s>  --rollback-owner <who>",
  "           --job-url <template> (the provider's page for one job, e.g. https://deploy.example/jobs/{providerJobId})",
  "           --timeout-ms <n>  --settle-deadline-ms <n>  --json",
].join("\n");

/** A whole number of the flag, or a usage error naming it. */
function whole(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name}: a whole number, not ${JSON.stringify(value)}`);
  return Number(value);
}

async function teamId(slug: string): Promise<string> {
  const t = await findTeamBySlug(SYSTEM, slug);
  if (!t) throw new UsageError(`--team: no team "${slug}"`);
  return t.id;
}

export const providersCommand: Command = {
  summary: "list and register the providers the barrier engine asks (http, MCP servers, A2A agents)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    const dal = () => import("../../lib/modules/stop");
    if (sub === "list") {
      const { values } = parseFlags(rest, { team: { type: "string" }, json: { type: "boolean" } }, { positionals: false });
      const slug = requireFlag(values.team, "team");
      return withDatabase(async () => {
        const rows = await (await dal()).listProviders(SYSTEM, await teamId(slug));
        if (values.json) console.log(JSON.stringify(rows));
        else if (!rows.length) console.log(`no providers for team ${slug}`);
        for (const r of values.json ? [] : rows) {
          const where = r.url ?? (r.command ? r.command.join(" ") : [r.cancelUrl, r.statusUrl].filter(Boolean).join(" "));
          console.log(
            `${r.name}\t${r.kind}\t${where}${r.statusUrl && r.kind !== "http" ? `\teffect check ${r.statusUrl}` : ""}${r.jobUrl ? `\tjob page ${r.jobUrl}` : ""}`,
          );
        }
        return 0;
      });
    }
    if (sub === "add") {
      // Everything after `--` is the stdio server's command, given as it would be typed.
      const cut = rest.indexOf("--");
      const flags = cut < 0 ? rest : rest.slice(0, cut);
      const command = cut < 0 ? undefined : rest.slice(cut + 1);
      const { values } = parseFlags(
        flags,
        {
          team: { type: "string" },
          name: { type: "string" },
          kind: { type: "string" },
          url: { type: "string" },
          "cancel-url": { type: "string" },
          "status-url": { type: "string" },
          "compensate-url": { type: "string" },
          "quiet-period": { type: "string" },
          "rollback-owner": { type: "string" },
          "timeout-ms": { type: "string" },
          "settle-deadline-ms": { type: "string" },
          "job-url": { type: "string" },
          json: { type: "boolean" },
        },
        { positionals: false },
      );
      const slug = requireFlag(values.team, "team");
      const kind = requireFlag(values.kind, "kind");
      if (!(PROVIDER_KINDS as readonly string[]).includes(kind))
        throw new UsageError(`--kind: one of ${PROVIDER_KINDS.join(", ")}, not "${kind}"`);
      if (command && command.length === 0) throw new UsageError("a command is required after --");
      const input = {
        name: requireFlag(values.name, "name"),
        kind,
        url: values.url,
        command,
        cancelUrl: values["cancel-url"],
        statusUrl: values["status-url"],
        compensateUrl: values["compensate-url"],
        quietPeriodSeconds: whole(values["quiet-period"], "quiet-period"),
        rollbackOwner: values["rollback-owner"],
        timeoutMs: whole(values["timeout-ms"], "timeout-ms"),
        settleDeadlineMs: whole(values["settle-deadline-ms"], "settle-deadline-ms"),
        jobUrl: values["job-url"],
      };
      const body = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
      return withDatabase(async () => {
        const r = await (await dal()).createProvider(SYSTEM, body, await teamId(slug));
        if (values.json) console.log(JSON.stringify(r));
        else console.log(`provider ${r.name} (${r.kind}) registered as ${r.id}`);
        return 0;
      });
    }
    throw new UsageError(sub ? `unknown subcommand "providers ${sub}"` : "a subcommand is required: list or add");
  },
};
