// `quiesce stops show <stopId>` / `quiesce stops resume <stopId> --reason …`: a fleet stop's progress and
// fleet receipt, and lifting a pause scope (docs/fleet-stop.md). Over the API with an operator key.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { API_FLAGS, callApi, clientFrom, onePositional, requireReason } from "../../lib/cli/api";
import { describeStop } from "../../lib/cli/stop-view";

export const stopsCommand: Command = {
  summary: "show a fleet stop's progress and fleet receipt, or resume (lift) a pause scope",
  usage: "npm run quiesce -- stops show <stopId> [--json] | stops resume <stopId> --reason <text> [--url <url>] [--key <operator key>]",
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub !== "show" && sub !== "resume")
      throw new UsageError("expected `stops show <stopId>` or `stops resume <stopId> --reason <text>`");
    const { values, positionals } = parseFlags(rest, { ...API_FLAGS, reason: { type: "string" } });
    const stopId = onePositional(positionals, "a stop id");
    const reason = sub === "resume" ? requireReason(values.reason) : null;
    const client = clientFrom(values);
    return callApi(async () => {
      const res = reason === null ? await client.getStop(stopId) : await client.resumeStop(stopId, reason);
      console.log(values.json ? JSON.stringify(res) : describeStop(res));
      return 0;
    });
  },
};
