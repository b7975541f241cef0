// Typed SDK errors. Adapters turn BOTH into a deny (fail closed, docs/architecture.md#integrations-fail-closed): an HTTP error is the
// control plane saying no; an unreachable control plane is never a pass.

/** The control plane answered with an error status and `{ error: { code, message } }`. */
export class QuiesceApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "QuiesceApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** No answer: network error, refused connection, DNS failure, or our own timeout. */
export class QuiesceUnreachableError extends Error {
  readonly timedOut: boolean;
  constructor(message: string, options: { cause?: unknown; timedOut?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = "QuiesceUnreachableError";
    this.timedOut = options.timedOut ?? false;
  }
}

/** Misuse of the client itself (no URL, no key). */
export class QuiesceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QuiesceConfigError";
  }
}
