#!/usr/bin/env node
// `npm run web -- -p <port> -H <host>`: the web app (a production build, `npm run build`) behind the
// project's front, which decides each request's source address from the socket (lib/start/web-front.ts,
// docs/security/identity.md#the-source-address). Deployments run this instead of a bare `next start`, whose
// handlers would believe any client's X-Forwarded-For. `npm start` runs the same entry itself. Not under
// --conditions=react-server: Next loads React's own builds for rendering.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureCliBuild } from "../lib/build/cli-build.mjs";

const root = path.resolve(import.meta.dirname, "..");
let dir;
try {
  ({ dir } = await ensureCliBuild(root, (line) => console.error(`${"[build]".padEnd(16)} ${line}`)));
} catch (err) {
  console.error(`error: the web front could not be built: ${err?.message ?? err}`);
  process.exit(1);
}
await import(pathToFileURL(path.join(dir, "web.mjs")).href);
