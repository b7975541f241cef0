// The first problem of a failed zod parse, as "field: message" in English. The adapters' input
// schemas use zod/mini (the same validation core as `zod`, without the method-chaining classes),
// which ships no locale: English messages are switched on here, on the error path only, and the
// value is parsed again to word its first issue. Startup of the bundled hook (one fresh process per
// tool call) never pays for them.
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

let english = false;

export function firstIssue(schema: z.ZodMiniType, value: unknown): string {
  if (!english) {
    z.config(en());
    english = true;
  }
  const r = schema.safeParse(value);
  const issue = r.success ? undefined : r.error.issues[0];
  return `${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`;
}
