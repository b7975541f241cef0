// `quiesce reconcile list|assign|resolve`: work the `unknown` outcomes of stop barriers (docs/architecture.md#the-cancellation-barrier).
// Reads and writes the database directly; writes act AS a named member (--as <email>), whose current
// role is checked exactly as in the console: managers/admins assign; the assignee or a manager/admin
// resolves. Resolving (and assigning, once a receipt exists) issues a new receipt version.
import type { Command } from "./types";
import { onePositional, parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { assignReconciliation, listReconciliations, memberPrincipal, resolveReconciliation, userIdForEmail } from "../../lib/modules/stop";
import { findTeamBySlug } from "../../lib/modules/members";
import { closeDbClients } from "../../lib/start/database";

const SYSTEM = { type: "system", name: "cli:reconcile" } as const;
const USAGE = [
  "npm run quiesce -- reconcile list [--team <slug>] [--barrier <id>] [--all] [--json]",
  "npm run quiesce -- reconcile assign <reconciliationId> --to <email> --as <email>",
  "npm run quiesce -- reconcile resolve <reconciliationId> --resolution effect_present|effect_absent --evidence <text> --as <email>",
].join("\n       ");

export const reconcileCommand: Command = {
  summary: "list, assign and resolve reconciliations of unknown outcomes (re-issues the stop receipt)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parseFlags(rest, {
      team: { type: "string" },
      barrier: { type: "string" },
      all: { type: "boolean" },
      json: { type: "boolean" },
      to: { type: "string" },
      as: { type: "string" },
      resolution: { type: "string" },
      evidence: { type: "string" },
    });
    try {
      if (sub === "list") {
        let teamId: string | undefined;
        if (values.team) {
          const team = await findTeamBySlug(SYSTEM, values.team);
          if (!team) throw new UsageError(`--team: no team "${values.team}"`);
          teamId = team.id;
        }
        const rows = await listReconciliations(SYSTEM, { teamId, barrierId: values.barrier, status: values.all ? "all" : "open" });
        if (values.json) console.log(JSON.stringify(rows, null, 2));
        else if (rows.length === 0) console.log("no reconciliations");
        else
          for (const r of rows) {
            console.log(
              `${r.id}  ${r.status.padEnd(17)} ${r.operationId} (${r.tool}) barrier ${r.barrierId ?? "none"} cause ${r.cause ?? "-"} owner ${r.assignee?.email ?? "none (no admin to name)"}${r.resolution ? ` -> ${r.resolution}` : ""}${r.providerJobUrl ? ` check ${r.providerJobUrl}` : ""}`,
            );
          }
        return 0;
      }
      if (sub === "assign") {
        const id = onePositional(positionals, "a reconciliation id");
        const actor = await memberPrincipal(SYSTEM, requireFlag(values.as, "as").trim(), id);
        const r = await assignReconciliation(actor, id, await userIdForEmail(SYSTEM, requireFlag(values.to, "to").trim()));
        console.log(
          values.json
            ? JSON.stringify(r)
            : `${id}: assigned to ${r.assignee?.email}${r.receiptVersion ? `; receipt v${r.receiptVersion} issued` : ""}`,
        );
        return 0;
      }
      if (sub === "resolve") {
        const id = onePositional(positionals, "a reconciliation id");
        const resolution = requireFlag(values.resolution, "resolution").trim();
        if (resolution !== "effect_present" && resolution !== "effect_absent")
          throw new UsageError("--resolution: effect_present or effect_absent");
        const actor = await memberPrincipal(SYSTEM, requireFlag(values.as, "as").trim(), id);
        const r = await resolveReconciliation(actor, id, { resolution, evidence: requireFlag(values.evidence, "evidence").trim() });
        console.log(
          values.json
            ? JSON.stringify(r)
            : `${id}: resolved ${resolution}${r.receiptVersion ? `; receipt v${r.receiptVersion} issued` : ""}`,
        );
        return 0;
      }
      throw new UsageError(sub ? `unknown subcommand: ${sub}` : "a subcommand is required: list, assign or resolve");
    } finally {
      await closeDbClients();
    }
  },
};
