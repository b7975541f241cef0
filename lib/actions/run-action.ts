// The ONE path every console server action takes (docs/architecture.md#conventions): parse with zod → resolve the
// current principal from the database → authorize → call the dal → revalidate → a plain result.
// Server actions are public endpoints (anyone can POST one), so nothing here trusts the page that
// rendered the button: a control the role may not use is refused even when posted by hand.
import "server-only";
import { revalidatePath } from "next/cache";
import type { z } from "zod";
import { isAllowed, type Action } from "../control/authz";
import { QuiesceError, type ErrorCode } from "../platform/errors";
import { currentSession, type ConsoleSession } from "../modules/sessions";
import { findUnsafeText } from "../platform/security/text";
import { logger } from "../platform/log";

export type ActionResult<T> = { ok: true; data: T } | { ok: false; code: ErrorCode; message: string };

export interface ActionSpec<S extends z.ZodType> {
  /** Name for logs. */
  name: string;
  input: S;
  /** The permission checked before the dal is called (the dal checks again, and checks the team). */
  action: Action | ((input: z.infer<S>) => Action);
  /** Paths whose server-rendered data changes (or a function of the input naming them); pages also refresh live through react-query. */
  revalidate?: readonly string[] | ((input: z.infer<S>) => readonly string[]);
}

type Handler<S extends z.ZodType, T> = (ctx: { session: ConsoleSession; input: z.infer<S> }) => Promise<T>;

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid input";
  const field = issue.path.length ? issue.path.join(".") : "input";
  return `${field}: ${issue.message}`;
}

export async function runAction<S extends z.ZodType, T>(
  spec: ActionSpec<S>,
  raw: unknown,
  handler: Handler<S, T>,
): Promise<ActionResult<T>> {
  // NUL and lone surrogates are refused in every field before anything reads them.
  const unsafe = findUnsafeText(raw, "input");
  if (unsafe) return { ok: false, code: "bad_request", message: `${unsafe.field.replace(/^input\./, "")}: ${unsafe.message}` };
  const parsed = spec.input.safeParse(raw);
  if (!parsed.success) return { ok: false, code: "bad_request", message: firstIssue(parsed.error) };
  const session = await currentSession();
  if (!session) return { ok: false, code: "unauthenticated", message: "sign in again: your session ended or your membership was removed" };
  const action = typeof spec.action === "function" ? spec.action(parsed.data) : spec.action;
  if (!isAllowed({ type: "user", role: session.principal.role }, action)) {
    return { ok: false, code: "forbidden", message: `your role (${session.principal.role}) may not ${action.replace(".", " ")}` };
  }
  try {
    const data = await handler({ session, input: parsed.data });
    const paths = typeof spec.revalidate === "function" ? spec.revalidate(parsed.data) : (spec.revalidate ?? []);
    for (const path of paths) revalidatePath(path);
    return { ok: true, data };
  } catch (err) {
    if (err instanceof QuiesceError) return { ok: false, code: err.code, message: err.message };
    logger("console").error({ err, action: spec.name }, "server action failed");
    return { ok: false, code: "internal", message: "internal error — reload to see the current state" };
  }
}

/**
 * A console server action, declared as `export const fooAction = serverAction({ name, input, action, revalidate }, handler)`
 * in a "use server" file: the file states what the action parses, may do, refreshes and calls; runAction does the rest.
 */
export function serverAction<S extends z.ZodType, T>(
  spec: ActionSpec<S>,
  handler: Handler<S, T>,
): (raw: unknown) => Promise<ActionResult<T>> {
  return async (raw: unknown) => runAction(spec, raw, handler);
}
