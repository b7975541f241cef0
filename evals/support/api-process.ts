// The web app's machine API as its own process, WITHOUT a Next build: every app/api route handler
// served over real HTTP by test/support/api-server.ts (the same handlers `next start` serves).
// Used by `npm run evals` when there is no up-to-date build or QUIESCE_EVAL_SERVER=handlers.
// Prints {"event":"ready","url":…} when listening; SIGTERM closes it.
import { startApiServer } from "../../test/support/api-server";
import { setting } from "../../lib/platform/config";

const port = setting("PORT");
const server = await startApiServer({ port, host: "127.0.0.1" });
process.stdout.write(`${JSON.stringify({ event: "ready", url: server.url, pid: process.pid })}\n`);
const stop = () => {
  void server.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 5000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
