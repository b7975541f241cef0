// `quiesce breaker trip|reset <runId> --reason …`: the breaker is its own state machine (docs/ideas.md#control-state);
// tripping or resetting it never changes the run's lifecycle. Over the API with an operator key.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { API_FLAGS, callApi, clientFrom, onePositional, requireReason } from "../../lib/cli/api";

export const breakerCommand: Command = {
  summary: "trip or reset a run's circuit breaker, with a reason (lifecycle is untouched)",
  usage: "npm run quiesce -- breaker trip|reset <runId> --reason <text> [--json] [--url <url>] [--key <operator key>]",
  async run(argv) {
    const [action, ...rest] = argv;
    if (action !== "trip" && action !== "reset") {
      throw new UsageError(action ? `unknown breaker action "${action}": use trip or reset` : "an action is required: trip or reset");
    }
    const { values, positionals } = parseFlags(rest, { ...API_FLAGS, reason: { type: "string" } });
    const runId = onePositional(positionals, "a run id");
    const reason = requireReason(values.reason);
    const client = clientFrom(values);
    return callApi(async () => {
      const res = await client.breaker(runId, action, reason);
      console.log(
        values.json
          ? JSON.stringify(res)
          : `${runId}: breaker ${res.breaker}${res.changed === false ? " (unchanged: it already was)" : ""}`,
      );
      return 0;
    });
  },
};
