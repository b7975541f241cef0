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

export function asQuiesceError(err: unknown): QuiesceError {
  if (err instanceof QuiesceError) return err;
  return new QuiesceError("internal", "internal error");
}
