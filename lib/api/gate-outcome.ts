// Maps the gate function's refusals (it authenticates the key itself, in the same round trip) onto
// the API's one error shape.
import { QuiesceError } from "../platform/errors";

export function gateRefusal(r: { ok: false; code: string; message: string }): QuiesceError {
  switch (r.code) {
    case "unauthenticated":
      return new QuiesceError("unauthenticated", r.message || "invalid, revoked or expired api key");
    case "forbidden":
      return new QuiesceError("forbidden", r.message || "not allowed: gate.ask");
    case "not_found":
      return new QuiesceError("not_found", "operation not found");
    default:
      return new QuiesceError("internal", "gate refused");
  }
}
