// `quiesce audit verify [--team <slug>] [--json]`: checks every audit chain (or one team's) row by row,
// then against the heads recorded apart from it (audit_checkpoints, and the audit head each stop
// receipt carries), so deleting the newest rows or editing a row and recomputing the chain after it is
// caught. Prints the latest checkpoints, records a new one for each intact chain; exit 1 on a problem.
// `quiesce audit checkpoint`: records a checkpoint for every chain whose head moved (periodic use).
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { recordPeriodicCheckpoints, verifyAudit } from "../../lib/modules/audit";
import { findTeamBySlug } from "../../lib/modules/members";
import type { Principal } from "../../lib/platform/auth/principal";
import { withDatabase } from "../../lib/start/database";

const SYSTEM: Principal = { type: "system", name: "cli" };
const USAGE = "npm run quiesce -- audit verify [--team <slug>] [--json]\n       npm run quiesce -- audit checkpoint";

export const auditCommand: Command = {
  summary: "verify the audit chains against their recorded checkpoints (detects edits, truncation, re-chaining)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "checkpoint") {
      const { positionals } = parseFlags(rest, {});
      if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
      return withDatabase(async () => {
        const n = await recordPeriodicCheckpoints(SYSTEM);
        console.log(`${n} checkpoint(s) recorded`);
        return 0;
      });
    }
    if (sub !== "verify")
      throw new UsageError(sub ? `unknown audit action "${sub}": use verify or checkpoint` : "an action is required: verify or checkpoint");
    const { values, positionals } = parseFlags(rest, { team: { type: "string" }, json: { type: "boolean" } });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    return withDatabase(async () => {
      let teamId: string | undefined;
      if (values.team !== undefined) {
        const team = await findTeamBySlug(SYSTEM, values.team);
        if (!team) throw new UsageError(`--team: no team with slug "${values.team}"`);
        teamId = team.id;
      }
      const report = await verifyAudit(SYSTEM, { teamId });
      if (values.json) {
        console.log(JSON.stringify(report));
      } else {
        for (const c of report.chains) {
          const head = c.head ? `head row ${c.head.eventId} ${c.head.hash.slice(0, 16)}…` : "empty";
          console.log(
            `${c.problems.length ? "FAIL" : "ok  "} ${c.team}: ${c.events} events, ${head}; ${c.checkpointsChecked} checkpoint(s), ${c.receiptsChecked} receipt head(s) checked`,
          );
          for (const p of c.problems) console.log(`     ${p.kind}: ${p.detail}`);
          for (const k of c.checkpoints)
            console.log(`     checkpoint ${k.id} ${k.at} ${k.source}: row ${k.lastEventId} (${k.eventCount} events) ${k.headHash}`);
        }
        console.log(report.ok ? "audit trail intact" : "audit trail damaged: see above");
      }
      return report.ok ? 0 : 1;
    });
  },
};
