// The one error type. Every layer throws QuiesceError; route handlers, server actions and the CLI
// map it once (httpStatus / toBody) so the same failure reads the same everywhere.

export const ERROR_STATUS = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class QuiesceError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "QuiesceError";
    this.code = code;
    this.details = details;
  }
  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }
  toBody(): { error: { code: ErrorCode; message: string; details?: unknown } } {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

/** Another team's resource and a missing one answer the same, so existence never leaks. */
export const notFound = (what: string) => new QuiesceError("not_found", `${what} not found`);
export const forbidden = (message: string) => new QuiesceError("forbidden", message);
export const badRequest = (message: string, details?: unknown) => new QuiesceError("bad_request", message, details);

/** The reason an operator's control write must carry, trimmed; 400 when there is none. */
export function requiredReason(reason: string | undefined): string {
  const why = reason?.trim();
  if (!why) throw badRequest("reason: a reason is required");
  return why;
}

/**
 * SQLSTATEs of a database that is down, restarting, failing over or (a standby) read-only, or too slow
 * to answer within our timeouts (statement or lock timeout); and Prisma's codes for the same: no
 * connection (P1001, P1002, P1008, P1017) or no transaction within its wait (P2028, an exhausted pool).
 */
const DB_UNAVAILABLE_CODES = /^(08|57P0[1-3]|57014$|55P03$|25006|53300|P1001$|P1002$|P1008$|P1017$|P2028$)/;
const DB_UNAVAILABLE_TEXT =
  /ECONNREFUSED|ECONNRESET|Connection terminated|connection (?:ended|closed)|timeout exceeded when trying to connect|no read-write PostgreSQL host reachable|is no longer read-write|query_wait_timeout|server conn crashed|read-only transaction|Can't reach database server/i;

/**
 * True when `err` (or an error in its cause chain) says the database could not be reached or would
 * not take writes — a failover, a restart, an unreachable pooler — rather than a bug.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const o = e as { code?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown; meta?: { driverAdapterError?: unknown } };
    for (const c of [o.code, o.originalCode]) if (typeof c === "string" && DB_UNAVAILABLE_CODES.test(c)) return true;
    if (typeof o.message === "string" && DB_UNAVAILABLE_TEXT.test(o.message)) return true;
    // A failed raw query (Prisma P2010) keeps the driver's error, SQLSTATE included, in its meta: e.g. a
    // kill's tree lock timing out (55P03) under a fleet stop's load.
    e = o.cause ?? o.meta?.driverAdapterError;
  }
  return false;
}

export function asQuiesceError(err: unknown): QuiesceError {
  if (err instanceof QuiesceError) return err;
  // 503, not 500: the caller should retry (control writes are idempotent); the write may or may not
  // have committed, so it is reported as failed, never as done (docs/deploy.md#high-availability).
  if (isDatabaseUnavailable(err))
    return new QuiesceError(
      "unavailable",
      "control database unavailable (failover or outage): the request failed and may not have been applied; retry",
    );
  return new QuiesceError("internal", "internal error");
}
