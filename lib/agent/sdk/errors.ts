// Typed SDK errors. Adapters turn BOTH into a deny (fail closed, docs/architecture.md#integrations-fail-closed): an HTTP error is the
// control plane saying no; an unreachable control plane is never a pass.

/** The control plane answered with an error status and `{ error: { code, message } }`. */
export class QuiesceApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;
  /** The x-request-id the call was sent with (the server logs it on every line of that request). */
  readonly requestId?: string;
  constructor(status: number, code: string, message: string, details?: unknown, requestId?: string) {
    super(message);
    this.name = "QuiesceApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }
}

/** No answer: network error, refused connection, DNS failure, or our own timeout. */
export class QuiesceUnreachableError extends Error {
  readonly timedOut: boolean;
  /** The x-request-id the call was sent with (if the request reached the server, its logs have it). */
  readonly requestId?: string;
  constructor(message: string, options: { cause?: unknown; timedOut?: boolean; requestId?: string } = {}) {
    super(message, { cause: options.cause });
    this.name = "QuiesceUnreachableError";
    this.timedOut = options.timedOut ?? false;
    this.requestId = options.requestId;
  }
}

/**
 * A fresh request id for one call: sent as x-request-id, echoed by the server on its response and on
 * every log line of the request (lib/api/route.ts), so a failure the caller saw can be found there.
 */
export function newRequestId(): string {
  return globalThis.crypto.randomUUID();
}

/** Misuse of the client itself (no URL, no key). */
export class QuiesceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QuiesceConfigError";
  }
}
