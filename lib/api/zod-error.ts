// A zod failure becomes ONE clear 400 that names the bad field ("body.epoch: expected number…"),
// with every issue listed in details for tools.
import type { z } from "zod";
import { QuiesceError } from "../platform/errors";

export function fieldPath(where: string, path: readonly PropertyKey[]): string {
  return [where, ...path.map((p) => String(p))].join(".");
}

export function zodToBadRequest(error: z.ZodError, where: "body" | "query" | "params"): QuiesceError {
  const issues = error.issues.map((i) => ({
    // An unknown key is named by itself ("body.bogus"), not by the object that holds it.
    field: fieldPath(where, i.code === "unrecognized_keys" && i.keys.length ? [...i.path, i.keys[0]!] : i.path),
    message: i.message,
  }));
  const first = issues[0] ?? { field: where, message: "invalid" };
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return new QuiesceError("bad_request", `${first.field}: ${first.message}${more}`, { issues });
}
