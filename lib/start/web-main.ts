// The web process `npm start` runs: Next behind the project's front (lib/start/web-front.ts), which
// decides each request's source address from the socket. Arguments as `next start` takes them:
// `start -p <port> -H <host>` (or `dev`, for trying the front with Next's development server).
import path from "node:path";
import { assertConfig, setting } from "../platform/config";
import { logger } from "../platform/log";
import { startWebFront } from "./web-front";

const args = process.argv.slice(2);
const dev = args[0] === "dev";
const value = (flag: string, fallback: string) => {
  const i = args.indexOf(flag);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const port = Number(value("-p", process.env.PORT ?? "3000"));
const host = value("-H", "127.0.0.1");
assertConfig();
// As `next start` and `next dev` set it, before Next is loaded.
(process.env as Record<string, string>).NODE_ENV ??= dev ? "development" : "production";

const log = logger("web");
const upstream = setting("QUIESCE_API_UPSTREAM");
const secret = setting("QUIESCE_FRONT_SECRET");
if (upstream && !secret)
  throw new Error("QUIESCE_API_UPSTREAM is set without QUIESCE_FRONT_SECRET: the API process could not tell the front's requests apart");
const api = upstream && secret ? { upstream, secret } : undefined;
const front = await startWebFront({ port, host, dev, api, dir: path.resolve(import.meta.dirname, "../..") });
log.info({ url: front.url, api: upstream ?? "served by Next" }, "web app listening (behind the front: source addresses from the socket)");
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    front.close().finally(() => process.exit(0));
  });
}
