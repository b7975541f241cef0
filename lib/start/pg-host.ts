// The embedded PostgreSQL for `npm start`, hosted in a process of its own, in its own process group.
// Why: a terminal's Ctrl-C goes to the whole foreground process group. If the database server were in
// it, it would shut down at once, while the web app, the barrier engine and the demo are still
// stopping and need it. Detached, it is stopped last, by `npm start`, over the IPC channel; if
// `npm start` dies abruptly, the channel closes and this process stops the server itself.
// Protocol: sends { type: "ready", url, owned } or { type: "error", message }; stops on "stop",
// on SIGTERM, or when the channel disconnects.
import { startEmbeddedPostgres, type EmbeddedHandle } from "../db/embedded";
import { EMBEDDED_DATABASE } from "./database";
import { logger } from "../log";

const send = (m: unknown) => new Promise<void>((r) => (process.send ? process.send(m, () => r()) : r()));
let server: EmbeddedHandle | undefined;
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await server?.stop().catch((err) => logger("postgres").error({ err }, "stop failed"));
  }
  process.exit(code);
}

process.on("message", (m) => {
  if (m === "stop") void stop(0);
});
process.on("disconnect", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
process.on("SIGINT", () => {
  /* not ours to act on: npm start decides when the database stops */
});

try {
  server = await startEmbeddedPostgres();
  await server.createDatabase(EMBEDDED_DATABASE);
  await send({ type: "ready", url: server.url(EMBEDDED_DATABASE), owned: server.owned });
  // A server that was already running belongs to whoever started it: nothing to host.
  if (!server.owned) process.exit(0);
} catch (err) {
  await send({ type: "error", message: (err as Error).message ?? String(err) });
  await stop(1);
}
