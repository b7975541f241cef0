// The CLI's operator and read commands talk to the control plane over HTTP with the SDK, so they are
// authenticated and authorized exactly like any API caller (an operator key carries its user's
// current role). This file turns flags into a client and SDK errors into exit codes.
import { QuiesceClient } from "../agent/sdk/client";
import { QuiesceApiError, QuiesceConfigError, QuiesceUnreachableError } from "../agent/sdk/errors";
import { UsageError, type Options } from "./args";
export { onePositional } from "./args";
import { setting } from "../platform/config";

/** Flags every HTTP command accepts. */
export const API_FLAGS = {
  url: { type: "string" },
  key: { type: "string" },
  json: { type: "boolean" },
} as const satisfies Options;

export function defaultUrl(): string {
  return setting("QUIESCE_URL") ?? `http://localhost:${setting("PORT")}`;
}

export function clientFrom(values: { url?: string; key?: string }): QuiesceClient {
  const apiKey = values.key ?? setting("QUIESCE_API_KEY");
  if (!apiKey) {
    throw new UsageError(
      "no API key: set QUIESCE_API_KEY or pass --key (operator keys: `npm run quiesce -- keys create --team <slug> --kind operator --user <email>`; the demo keys are in .quiesce/demo-keys.json)",
    );
  }
  const url = values.url ?? defaultUrl();
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url: not a URL: "${url}"`);
  }
  try {
    return new QuiesceClient({ url, apiKey, timeoutMs: setting("QUIESCE_TIMEOUT_MS") });
  } catch (err) {
    if (err instanceof QuiesceConfigError) throw new UsageError(err.message);
    throw err;
  }
}

/** Exactly one positional argument (a run id), else a usage error. */

export function requireReason(reason: string | undefined): string {
  if (reason === undefined || reason.trim() === "") throw new UsageError("--reason is required (it is written to the audit trail)");
  if (reason.length > 2000) throw new UsageError("--reason: at most 2000 characters");
  return reason.trim();
}

/**
 * Runs one API call. The control plane refusing (4xx: bad input, forbidden, not found) exits 2 and
 * changed nothing; a server error or no answer exits 1.
 */
export async function callApi(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof QuiesceApiError) {
      console.error(`error (${err.code}, HTTP ${err.status}${err.requestId ? `, request ${err.requestId}` : ""}): ${err.message}`);
      return err.status >= 400 && err.status < 500 ? 2 : 1;
    }
    if (err instanceof QuiesceUnreachableError) {
      console.error(
        `error (unreachable${err.requestId ? `, request ${err.requestId}` : ""}): ${err.message}\nIs the control plane running (npm start)? Set QUIESCE_URL or --url to point elsewhere.`,
      );
      return 1;
    }
    if (err instanceof QuiesceConfigError) throw new UsageError(err.message);
    throw err;
  }
}
