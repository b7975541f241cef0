// `quiesce runs list|show`: reads over the API, so a key sees exactly its own team's runs.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { API_FLAGS, callApi, clientFrom, onePositional } from "../../lib/cli/api";
import { LIFECYCLES } from "../../lib/control/types";
import type { RunSummary, RunView } from "../../lib/schemas/runs";

const USAGE = [
  "npm run quiesce -- runs list [--lifecycle normal|paused|killed] [--q <text>] [--parent <runId>] [--roots] [--limit 1-200] [--cursor <c>] [--json]",
  "       npm run quiesce -- runs show <runId> [--json]",
  "       (both accept --url <url> and --key <key>; default QUIESCE_URL / QUIESCE_API_KEY)",
].join("\n");

function row(r: RunSummary): string {
  const indent = "  ".repeat(Math.min(r.depth, 6));
  return [
    `${indent}${r.runId}`.padEnd(32),
    r.lifecycle.padEnd(7),
    `breaker=${r.breaker}`.padEnd(17),
    `epoch=${r.epoch}`.padEnd(9),
    r.taskId,
    r.title ? JSON.stringify(r.title) : "",
  ]
    .join(" ")
    .trimEnd();
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    ...API_FLAGS,
    lifecycle: { type: "string" },
    q: { type: "string" },
    parent: { type: "string" },
    roots: { type: "boolean" },
    limit: { type: "string" },
    cursor: { type: "string" },
  });
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const lifecycle = values.lifecycle;
  if (lifecycle !== undefined && !(LIFECYCLES as readonly string[]).includes(lifecycle)) {
    throw new UsageError(`--lifecycle: must be one of ${LIFECYCLES.join(", ")}, got "${lifecycle}"`);
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      throw new UsageError(`--limit: a whole number from 1 to 200, got "${values.limit}"`);
  }
  const client = clientFrom(values);
  return callApi(async () => {
    const page = await client.listRuns({
      limit,
      cursor: values.cursor,
      lifecycle: lifecycle as RunSummary["lifecycle"] | undefined,
      q: values.q,
      parentRunId: values.parent,
      rootsOnly: values.roots ? true : undefined,
    });
    if (values.json) {
      console.log(JSON.stringify(page, null, 2));
      return 0;
    }
    if (page.runs.length === 0) console.log("no runs");
    for (const r of page.runs) console.log(row(r));
    if (page.nextCursor) console.error(`more: --cursor ${page.nextCursor}`);
    return 0;
  });
}

function details(r: RunView): string[] {
  const lines = [
    `run        ${r.runId}${r.title ? `  ${JSON.stringify(r.title)}` : ""}`,
    `task       ${r.taskId}   harness ${r.harness}`,
    `tree       root ${r.rootRunId}${r.parentRunId ? `  parent ${r.parentRunId}` : ""}  depth ${r.depth}`,
    `lifecycle  ${r.lifecycle}  since ${r.lifecycleChangedAt}${r.lifecycleChangedBy ? ` by ${r.lifecycleChangedBy}` : ""}${r.lifecycleReason ? `: ${r.lifecycleReason}` : ""}`,
    `breaker    ${r.breaker}  since ${r.breakerChangedAt}${r.breakerChangedBy ? ` by ${r.breakerChangedBy}` : ""}${r.breakerReason ? `: ${r.breakerReason}` : ""}  failures ${r.breakerFailures}`,
    `epoch      ${r.epoch}`,
    `heartbeat  ${r.lastHeartbeatAt ?? "never"}`,
  ];
  const native = Object.entries(r.native ?? {})
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${v}`);
  if (native.length) lines.push(`native     ${native.join(" ")}`);
  lines.push(`children   ${r.children.length}`);
  for (const c of r.children) lines.push(`  ${row(c)}`);
  lines.push(`leases     ${r.leases.length}`);
  for (const l of r.leases) {
    lines.push(
      `  ${l.leaseId}  until ${l.validUntil}${l.revokedAt ? `  REVOKED ${l.revokedAt} by ${l.revokedBy ?? "?"}` : ""}${l.scopes.length ? `  scopes=${l.scopes.join(",")}` : ""}`,
    );
  }
  return lines;
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, API_FLAGS);
  const runId = onePositional(positionals, "a run id");
  const client = clientFrom(values);
  return callApi(async () => {
    const run = await client.getRun(runId);
    if (values.json) console.log(JSON.stringify(run, null, 2));
    else for (const line of details(run)) console.log(line);
    return 0;
  });
}

export const runsCommand: Command = {
  summary: "list the team's runs or show one run (over the API, with QUIESCE_API_KEY)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "list") return list(rest);
    if (sub === "show") return show(rest);
    throw new UsageError(sub ? `unknown subcommand "runs ${sub}"` : "a subcommand is required: list or show");
  },
};
