// The one logger (pino). JSON lines in production — one object per event, with `level`, `time`,
// `component` and, inside an API call, `requestId` — and readable lines when QUIESCE_LOG_FORMAT=pretty
// (what `npm start` sets for its children). Secrets never reach a log line: the paths below are
// censored wherever they appear in a logged object (Authorization headers, API keys, passwords,
// session secrets, connection strings).
import { createRequire } from "node:module";
import path from "node:path";
import pino, { type DestinationStream, type Logger } from "pino";
import { setting } from "../config";

export type { Logger } from "pino";

const SECRET_KEYS = [
  "authorization",
  "Authorization",
  "cookie",
  "Cookie",
  "apiKey",
  "api_key",
  "key",
  "secret",
  "keySecret",
  "password",
  "passwordHash",
  "token",
  "accessToken",
  "refreshToken",
  "clientSecret",
  "NEXTAUTH_SECRET",
  "AUTH_SECRET",
  "DATABASE_URL",
  "QUIESCE_API_KEY",
  "connectionString",
];
export const REDACT_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'headers["authorization"]',
  'req.headers["authorization"]',
  'req.headers["cookie"]',
];
const CENSOR = "[redacted]";

export interface LoggerOptions {
  level?: string;
  format?: "json" | "pretty";
  /** Where lines go (tests); default stdout. */
  destination?: DestinationStream;
}

export function createLogger(o: LoggerOptions = {}): Logger {
  const level = o.level ?? setting("QUIESCE_LOG_LEVEL");
  const format = o.format ?? setting("QUIESCE_LOG_FORMAT");
  const options = { level, redact: { paths: REDACT_PATHS, censor: CENSOR }, base: { pid: process.pid } };
  if (o.destination) return pino(options, o.destination);
  if (format === "pretty") {
    // Synchronous pretty stream (no worker thread), loaded only when asked for.
    // Resolved from the working directory, so it also works from a bundled server chunk.
    const pretty = createRequire(path.join(process.cwd(), "package.json"))("pino-pretty") as (o: object) => DestinationStream;
    return pino(
      options,
      pretty({ sync: true, colorize: process.stdout.isTTY ?? false, ignore: "pid,hostname", translateTime: "SYS:HH:MM:ss.l" }),
    );
  }
  return pino(options);
}

const g = globalThis as unknown as { quiesceLogger?: Logger };

/** The process's logger, or a child of it for one component ("api", "barrier-engine", …). */
export function logger(component?: string): Logger {
  g.quiesceLogger ??= createLogger();
  return component ? g.quiesceLogger.child({ component }) : g.quiesceLogger;
}

/** A `(line) => void` for code that takes a plain log function. */
export function lineLogger(component: string, level: "info" | "warn" | "debug" = "info"): (line: string) => void {
  const l = logger(component);
  return (line) => l[level](line);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's x-request-id when it is well-formed; otherwise a fresh one. */
export function requestIdFrom(header: string | null | undefined, fresh: () => string): string {
  return header && REQUEST_ID.test(header) ? header : fresh();
}
