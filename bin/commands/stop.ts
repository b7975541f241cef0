// `quiesce stop --action kill|pause (--filter key=value … | --all) --reason … [--dry-run]`: a fleet stop
// over the API with an operator key (docs/fleet-stop.md). --dry-run prints the matched count and a
// sample and changes nothing. --all (the whole team) must be said explicitly.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { API_FLAGS, callApi, clientFrom, requireReason } from "../../lib/cli/api";
import { parseStopFilter } from "../../lib/cli/stop-filter";
import { describeStop } from "../../lib/cli/stop-view";

export const stopCommand: Command = {
  summary: "fleet stop: pause or kill every run of the team matching a filter, as one durable scope (--dry-run: count only)",
  usage:
    "npm run quiesce -- stop --action kill|pause (--filter <key=value> … | --all) --reason <text> [--dry-run] [--json] [--url <url>] [--key <operator key>]\n" +
    "  filter keys: harness=claude_code,codex  agent=<id>  task=<task id prefix>  created-after=<ISO time>  created-before=<ISO time>\n" +
    "               status=active,paused,finished  runs=<run id>,<run id>",
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        ...API_FLAGS,
        action: { type: "string" },
        filter: { type: "string", multiple: true },
        all: { type: "boolean" },
        reason: { type: "string" },
        "dry-run": { type: "boolean" },
      },
      { positionals: false },
    );
    if (values.action !== "kill" && values.action !== "pause") throw new UsageError("--action: kill or pause");
    const flags = values.filter ?? [];
    if (flags.length === 0 && !values.all) throw new UsageError("give --filter key=value (repeatable) or --all for the whole team");
    if (flags.length > 0 && values.all) throw new UsageError("--all and --filter: choose one");
    const filter = parseStopFilter(flags);
    const reason = requireReason(values.reason);
    const client = clientFrom(values);
    return callApi(async () => {
      const res = await client.createStop({
        action: values.action as "kill" | "pause",
        filter,
        reason,
        dryRun: values["dry-run"] ?? false,
      });
      console.log(values.json ? JSON.stringify(res) : describeStop(res));
      return 0;
    });
  },
};
