// pause / resume / kill / restart share one shape: `<verb> <runId> --reason <text>` over the API with an
// operator key. The control plane decides whether the key may; the CLI only checks the input.
import type { Command } from "./command";
import type { QuiesceClient } from "../agent/sdk/client";
import { parseFlags } from "./args";
import { API_FLAGS, callApi, clientFrom, onePositional, requireReason } from "./api";

type Verb = "pause" | "resume" | "kill" | "restart";

const SUMMARY: Record<Verb, string> = {
  pause: "pause a run and its subtree (the next gate call holds), with a reason",
  resume: "resume a paused run, with a reason",
  kill: "kill a run tree: revoke, cancel queued work, settle in-flight calls (starts the stop barrier)",
  restart: "start a killed root again as a new run for its task, only on settled ground (quiet receipt, no recovery owed)",
};

function describe(verb: Verb, runId: string, res: unknown): string {
  if (verb === "restart") {
    const r = res as { runId: string; restartedFromDigest: string; ledger: { outcome: string }[] };
    const n = (o: string) => r.ledger.filter((x) => x.outcome === o).length;
    return `${runId}: restarted as ${r.runId} (from receipt ${r.restartedFromDigest.slice(0, 12)}…); ledger: ${n("already_applied")} already applied, ${n("free_to_run")} free to run again`;
  }
  if (verb === "kill") {
    const r = res as { barrierId: string; created?: boolean };
    return (
      `${runId}: kill ${r.created === false ? "already under way" : "accepted"}; barrier ${r.barrierId}` +
      "\n(the receipt appears at GET /api/v1/barriers/" +
      r.barrierId +
      "/receipt when the barrier completes)"
    );
  }
  const r = res as { lifecycle: string; changed?: boolean };
  return `${runId}: lifecycle ${r.lifecycle}${r.changed === false ? " (unchanged: it already was)" : ""}`;
}

export function controlCommand(verb: Verb): Command {
  return {
    summary: SUMMARY[verb],
    usage: `npm run quiesce -- ${verb} <runId> --reason <text> [--json] [--url <url>] [--key <operator key>]`,
    async run(argv) {
      const { values, positionals } = parseFlags(argv, { ...API_FLAGS, reason: { type: "string" } });
      const runId = onePositional(positionals, "a run id");
      const reason = requireReason(values.reason);
      const client: QuiesceClient = clientFrom(values);
      return callApi(async () => {
        const res = verb === "restart" ? await client.restartRun(runId, reason) : await client[verb](runId, reason);
        console.log(values.json ? JSON.stringify(res) : describe(verb, runId, res));
        return 0;
      });
    },
  };
}
