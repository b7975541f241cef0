// The JSON Claude Code writes to a command hook's stdin (code.claude.com/docs/en/hooks: common input
// fields, and the PreToolUse / PostToolUse / SessionStart / SubagentStart inputs). Only the fields the
// adapter needs are required; unknown fields are kept (Claude Code adds fields between versions).
import * as z from "zod/mini";
import { firstIssue } from "../common/issue";

const Common = {
  session_id: z.string().check(z.minLength(1), z.maxLength(300)),
  transcript_path: z.optional(z.string()),
  cwd: z.optional(z.string()),
  permission_mode: z.optional(z.string()),
  /** Present when the hook fires inside a subagent. */
  agent_id: z.optional(z.string().check(z.minLength(1), z.maxLength(300))),
  agent_type: z.optional(z.string()),
};

export const SessionStartInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("SessionStart"),
  source: z.optional(z.string()),
  model: z.optional(z.string()),
});

export const SubagentStartInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("SubagentStart"),
  agent_id: z.string().check(z.minLength(1), z.maxLength(300)),
  agent_type: z.optional(z.string()),
});

export const PreToolUseInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("PreToolUse"),
  tool_name: z.string().check(z.minLength(1), z.maxLength(300)),
  tool_input: z.unknown(),
  tool_use_id: z.string().check(z.minLength(1), z.maxLength(200)),
});

export const PostToolUseInput = z.looseObject({
  ...Common,
  hook_event_name: z.enum(["PostToolUse", "PostToolUseFailure"]),
  tool_name: z.string().check(z.minLength(1), z.maxLength(300)),
  tool_input: z.unknown(),
  tool_use_id: z.string().check(z.minLength(1), z.maxLength(200)),
  tool_response: z.optional(z.unknown()),
  error: z.optional(z.unknown()),
  /** PostToolUseFailure: true when the user interrupted the tool (its effect is unknown). */
  is_interrupt: z.optional(z.boolean()),
});

export type SessionStartInput = z.infer<typeof SessionStartInput>;
export type SubagentStartInput = z.infer<typeof SubagentStartInput>;
export type PreToolUseInput = z.infer<typeof PreToolUseInput>;
export type PostToolUseInput = z.infer<typeof PostToolUseInput>;

export type HookInput =
  | SessionStartInput
  | SubagentStartInput
  | PreToolUseInput
  | PostToolUseInput
  | { hook_event_name: "other"; event: string; session_id: string };

export class HookInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HookInputError";
  }
}

const SCHEMAS = {
  SessionStart: SessionStartInput,
  SubagentStart: SubagentStartInput,
  PreToolUse: PreToolUseInput,
  PostToolUse: PostToolUseInput,
  PostToolUseFailure: PostToolUseInput,
} as const;

/** Parses stdin text; throws HookInputError naming the bad field. */
export function parseHookInput(text: string): HookInput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new HookInputError("stdin is not JSON");
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new HookInputError("stdin is not a JSON object");
  const event = (raw as { hook_event_name?: unknown }).hook_event_name;
  if (typeof event !== "string" || !event) throw new HookInputError("hook_event_name: required");
  // Own keys only: an event named "toString" or "__proto__" must not reach Object.prototype.
  const schema = Object.hasOwn(SCHEMAS, event) ? SCHEMAS[event as keyof typeof SCHEMAS] : undefined;
  if (!schema) {
    const sid = (raw as { session_id?: unknown }).session_id;
    if (typeof sid !== "string" || !sid) throw new HookInputError("session_id: required");
    return { hook_event_name: "other", event, session_id: sid };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HookInputError(firstIssue(schema, raw));
  return parsed.data as HookInput;
}
