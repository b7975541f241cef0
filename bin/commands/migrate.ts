// `quiesce migrate`: applies prisma/migrations/* to DATABASE_URL (or the embedded server) under an
// advisory lock and lists what it applied. Running it again applies nothing.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { migrate } from "../../lib/platform/db/migrate";
import { redactUrl, withDatabase } from "../../lib/start/database";

export const migrateCommand: Command = {
  summary: "apply pending SQL migrations (prisma/migrations) to the database",
  usage: "npm run quiesce -- migrate [--json]   (DATABASE_URL, else the embedded server)",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { json: { type: "boolean" } });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const note = (line: string) => {
      if (!values.json) console.error(line);
    };
    const result = await withDatabase(async (url) => {
      note(`database: ${redactUrl(url)}`);
      // "applied …" lines go to stdout below; warnings (edited migrations) to stderr.
      return migrate(url, (line) => {
        if (!line.startsWith("applied ")) console.error(line);
      });
    }, note);
    if (values.json) {
      console.log(JSON.stringify(result));
    } else if (result.applied.length === 0) {
      console.log(`up to date (${result.alreadyApplied} migration(s) already applied)`);
    } else {
      for (const name of result.applied) console.log(`applied ${name}`);
      console.log(`${result.applied.length} migration(s) applied`);
    }
    return 0;
  },
};
