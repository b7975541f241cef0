#!/usr/bin/env node
// `npm start` and `npm run quiesce -- …` in production: runs the CLI from its prebuilt JavaScript
// (lib/build/cli-build.mjs), building it first when there is none yet or a source file changed. The
// build's messages go to stderr, and only when it builds. Run with --conditions=react-server (as the
// package.json scripts do): the route modules' `server-only` import needs it.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureCliBuild } from "../lib/build/cli-build.mjs";

const root = path.resolve(import.meta.dirname, "..");
let dir;
try {
  ({ dir } = await ensureCliBuild(root, (line) => console.error(`${"[build]".padEnd(16)} ${line}`)));
} catch (err) {
  console.error(`error: the CLI could not be built: ${err?.message ?? err}`);
  process.exit(1);
}
await import(pathToFileURL(path.join(dir, "quiesce.mjs")).href);
