// `quiesce drill`: the cancellation drills against a running Quiesce (docs/evals.md) — the races from
// the articles that need no process control, as drill runs in a team set aside for drills, with a
// pass / fail per case and links to the evidence. Exit 0 all passed (skips allowed), 1 a case failed
// or the target is unusable, 2 bad flags.
// `quiesce drill setup` sets the team aside on the deployment's database and prints the drill's keys.
import { writeFileSync } from "node:fs";
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { DRILL_CASES } from "../../lib/drill/index";
import { DrillSetupError, runDrill, selectCases } from "../../lib/drill/drill-run";
import { renderEvidence, renderTable } from "../../lib/drill/report";
import { withDatabase } from "../../lib/start/database";
import { setting } from "../../lib/platform/config";

const USAGE = [
  "npm run quiesce -- drill --url <base url> --key <operator key> [--agent-key <key>] [--stranger-key <key>] [--sim-url <url>] [--provider deploy-sim]",
  "                         [--only case,case] [--timeout <seconds>] [--json] [--report <file>] [--list]",
  "       npm run quiesce -- drill setup [--team drills] [--user drill-operator@drills.invalid] [--sim-url <url>] [--provider deploy-sim]",
  "  env: QUIESCE_URL, QUIESCE_OPERATOR_KEY, QUIESCE_AGENT_KEY, QUIESCE_PROVIDER_SIM_URL (flags override)",
].join("\n");

function url(v: string, flag: string): string {
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return v.replace(/\/+$/, "");
  } catch {
    throw new UsageError(`${flag}: not an http(s) URL: "${v}"`);
  }
}

async function setup(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    team: { type: "string" },
    user: { type: "string" },
    "sim-url": { type: "string" },
    provider: { type: "string" },
  });
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const team = values.team ?? "drills";
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(team))
    throw new UsageError(`--team: a slug of lowercase letters, digits and dashes, got "${team}"`);
  const user = (values.user ?? `drill-operator@${team}.invalid`).trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(user)) throw new UsageError(`--user: not an email address: "${user}"`);
  const simUrl = values["sim-url"] === undefined ? undefined : url(values["sim-url"], "--sim-url");
  const provider = values.provider ?? "deploy-sim";
  const { setupDrillTeam } = await import("../../lib/drill/setup");
  return withDatabase(async () => {
    const r = await setupDrillTeam({ team, user, simUrl, provider });
    console.error(
      `team "${r.team}" is set aside for drills (operator ${r.user}${r.provider ? `, provider ${r.provider} → ${simUrl}` : ""}); the keys below are shown once:`,
    );
    console.log(`QUIESCE_OPERATOR_KEY=${r.operatorKey}`);
    console.log(`QUIESCE_AGENT_KEY=${r.agentKey}`);
    return 0;
  });
}

export const drillCommand: Command = {
  summary: "run the cancellation drills against a running Quiesce (drill runs, pass/fail per case with receipt links)",
  usage: USAGE,
  async run(argv) {
    if (argv[0] === "setup") return setup(argv.slice(1));
    const { values, positionals } = parseFlags(argv, {
      url: { type: "string" },
      key: { type: "string" },
      "agent-key": { type: "string" },
      "stranger-key": { type: "string" },
      "sim-url": { type: "string" },
      provider: { type: "string" },
      only: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      report: { type: "string" },
      list: { type: "boolean" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.list) {
      for (const c of DRILL_CASES)
        console.log(`${c.name.padEnd(44)} ${c.expected.padEnd(32)} seed ${c.seed}  needs: ${c.needs.join(", ")}`);
      return 0;
    }
    const base = values.url ?? setting("QUIESCE_URL");
    if (!base) throw new UsageError("--url is required (or set QUIESCE_URL)");
    const key = values.key ?? setting("QUIESCE_OPERATOR_KEY");
    if (!key?.trim()) throw new UsageError("--key is required: an operator key of the drill team (or set QUIESCE_OPERATOR_KEY)");
    const agentKey = values["agent-key"] ?? setting("QUIESCE_AGENT_KEY");
    const simRaw = values["sim-url"] ?? setting("QUIESCE_PROVIDER_SIM_URL");
    const timeout = values.timeout === undefined ? 120 : Number(values.timeout);
    if (!Number.isInteger(timeout) || timeout < 5 || timeout > 3600)
      throw new UsageError(`--timeout: whole seconds 5–3600, got "${values.timeout}"`);
    let cases;
    try {
      cases = selectCases(
        values.only
          ?.split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      );
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const log = values.json ? () => {} : (l: string) => console.error(`[drill] ${l}`);
    let report;
    try {
      report = await runDrill(
        {
          url: url(base, "--url"),
          operatorKey: key.trim(),
          agentKey: agentKey?.trim() || undefined,
          strangerKey: values["stranger-key"]?.trim() || undefined,
          simUrl: simRaw ? url(simRaw, "--sim-url") : undefined,
          provider: values.provider ?? "deploy-sim",
          receiptTimeoutMs: timeout * 1000,
          log,
        },
        cases,
      );
    } catch (err) {
      if (err instanceof DrillSetupError) {
        console.error(`drill: ${err.message}`);
        return 1;
      }
      throw err;
    }
    if (values.report) writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      console.log(renderTable(report.cases));
      const ev = renderEvidence(report.cases);
      if (ev) console.log(`\nevidence:\n${ev}`);
    }
    return report.summary.ok ? 0 : 1;
  },
};
