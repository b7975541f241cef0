// `quiesce seed`: the idempotent demo data of lib/seed (team demo, users per role, keys, provider,
// team other). Prints secrets only for what this run created.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { seedDemo } from "../../lib/seed/index";
import { formatSeedReport } from "../../lib/seed/report";
import { redactUrl, withDatabase } from "../../lib/start/database";

export const seedCommand: Command = {
  summary: "create the demo team, users, keys and provider if missing (idempotent)",
  usage: "npm run quiesce -- seed [--keys-file <path>] [--json]   (QUIESCE_DEMO_PASSWORD sets the demo password)",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { json: { type: "boolean" }, "keys-file": { type: "string" } });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const note = (line: string) => {
      if (!values.json) console.error(line);
    };
    const result = await withDatabase(async (url) => {
      note(`database: ${redactUrl(url)}`);
      return seedDemo({ keysFile: values["keys-file"] });
    }, note);
    // Secrets of keys this run did not create stay in the keys file, not on the screen.
    if (values.json)
      console.log(JSON.stringify({ ...result, keys: result.keys.map((k) => (k.created ? k : { ...k, secret: undefined })) }, null, 2));
    else for (const line of formatSeedReport(result)) console.log(line);
    return 0;
  },
};
