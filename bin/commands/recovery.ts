// `quiesce recovery list|assign|start|record`: what was done about effects a stop found completed
// (docs/evidence.md#recovery). Writes act AS a named member (--as <email>) with their current role, as in
// the console: managers/admins assign; the owner or a manager/admin starts or records. Each write issues
// the next receipt version of every barrier above the effect.
import type { Command } from "./types";
import { onePositional, parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { assignRecovery, listRecoveries, memberPrincipal, recordRecovery, startRecovery, userIdForEmail } from "../../lib/modules/stop";
import { findTeamBySlug } from "../../lib/modules/members";
import { closeDbClients } from "../../lib/start/database";
import { RECOVERY_STATES, type RecoveryState } from "../../lib/control/recovery";
import type { RecoveryView } from "../../lib/schemas/recovery";

const SYSTEM = { type: "system", name: "cli:recovery" } as const;
const RECORDABLE = ["in_progress", "rolled_back", "accepted", "failed"] as const;
const USAGE = [
  "npm run quiesce -- recovery list [--team <slug>] [--barrier <id>] [--state open|all|<state>] [--json]",
  "npm run quiesce -- recovery assign <recoveryId> --to <email> --as <email>",
  "npm run quiesce -- recovery start <recoveryId> --as <email>",
  `npm run quiesce -- recovery record <recoveryId> --state ${RECORDABLE.join("|")} --note <text> --evidence <text> --as <email>`,
].join("\n       ");

function line(r: RecoveryView): string {
  const owner = r.assignee ? `${r.assignee.name} <${r.assignee.email}>` : "nobody";
  const proof = r.settledBy
    ? ` (${r.settledBy === "provider" ? `verified ${r.verifiedEffect} by ${r.providerName}` : `recorded by ${r.changedBy}`})`
    : "";
  return `${r.id}  ${r.state.padEnd(11)}${proof} ${r.operationId} (${r.tool}) provider ${r.providerName ?? "-"} rollback owner ${r.rollbackOwner ?? "-"} owner ${owner} due ${r.dueAt}${r.overdue ? " OVERDUE" : ""}`;
}

export const recoveryCommand: Command = {
  summary: "list, assign, start and record recoveries of effects a stop found completed (re-issues the stop receipt)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parseFlags(rest, {
      team: { type: "string" },
      barrier: { type: "string" },
      state: { type: "string" },
      json: { type: "boolean" },
      to: { type: "string" },
      as: { type: "string" },
      note: { type: "string" },
      evidence: { type: "string" },
    });
    const print = (r: RecoveryView) => console.log(values.json ? JSON.stringify(r) : line(r));
    try {
      if (sub === "list") {
        let teamId: string | undefined;
        if (values.team) {
          const team = await findTeamBySlug(SYSTEM, values.team);
          if (!team) throw new UsageError(`--team: no team "${values.team}"`);
          teamId = team.id;
        }
        const state = (values.state ?? "open") as "open" | "all" | RecoveryState;
        if (state !== "open" && state !== "all" && !(RECOVERY_STATES as readonly string[]).includes(state))
          throw new UsageError(`--state: open, all or one of ${RECOVERY_STATES.join(", ")}`);
        const rows = await listRecoveries(SYSTEM, { teamId, barrierId: values.barrier, state });
        if (values.json) console.log(JSON.stringify(rows, null, 2));
        else if (rows.length === 0) console.log("no recovery items");
        else for (const r of rows) print(r);
        return 0;
      }
      if (sub === "assign") {
        const id = onePositional(positionals, "a recovery id");
        const actor = await memberPrincipal(SYSTEM, requireFlag(values.as, "as").trim(), id);
        print(await assignRecovery(actor, id, await userIdForEmail(SYSTEM, requireFlag(values.to, "to").trim())));
        return 0;
      }
      if (sub === "start") {
        const id = onePositional(positionals, "a recovery id");
        const r = await startRecovery(await memberPrincipal(SYSTEM, requireFlag(values.as, "as").trim(), id), id);
        print(r);
        // Asked but not proven: the caller's script should not read this as done.
        return r.state === "rolled_back" ? 0 : 3;
      }
      if (sub === "record") {
        const id = onePositional(positionals, "a recovery id");
        const state = requireFlag(values.state, "state").trim();
        if (!(RECORDABLE as readonly string[]).includes(state)) throw new UsageError(`--state: one of ${RECORDABLE.join(", ")}`);
        const actor = await memberPrincipal(SYSTEM, requireFlag(values.as, "as").trim(), id);
        print(
          await recordRecovery(actor, id, {
            state: state as (typeof RECORDABLE)[number],
            note: requireFlag(values.note, "note").trim(),
            evidence: requireFlag(values.evidence, "evidence").trim(),
          }),
        );
        return 0;
      }
      throw new UsageError(sub ? `unknown subcommand: ${sub}` : "a subcommand is required: list, assign, start or record");
    } finally {
      await closeDbClients();
    }
  },
};
