// `npm run docs:config`: regenerates the table of environment variables in docs/configuration.md
// from lib/platform/config. `--check` exits 1 when the committed table is stale (the unit tests do the same).
import { readFileSync, writeFileSync } from "node:fs";
import { DOC_PATH, withConfigTable } from "../lib/platform/config/docs";

const current = readFileSync(DOC_PATH, "utf8");
const next = withConfigTable(current);
if (process.argv.includes("--check")) {
  if (next !== current) {
    console.error(`${DOC_PATH} is stale: run npm run docs:config`);
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(DOC_PATH, next);
  console.log(`wrote ${DOC_PATH}`);
}
