// The JSON Claude Code writes to a command hook's stdin (code.claude.com/docs/en/hooks: common input
// fields, and the PreToolUse / PostToolUse / SessionStart / SubagentStart inputs). Only the fields the
// adapter needs are required; unknown fields are kept (Claude Code adds fields between versions).
import { z } from "zod";

const Common = {
  session_id: z.string().min(1).max(300),
  transcript_path: z.string().optional(),
  cwd: z.string().optional(),
  permission_mode: z.string().optional(),
  /** Present when the hook fires inside a subagent. */
  agent_id: z.string().min(1).max(300).optional(),
  agent_type: z.string().optional(),
};

export const SessionStartInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("SessionStart"),
  source: z.string().optional(),
  model: z.string().optional(),
});

export const SubagentStartInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("SubagentStart"),
  agent_id: z.string().min(1).max(300),
  agent_type: z.string().optional(),
});

export const PreToolUseInput = z.looseObject({
  ...Common,
  hook_event_name: z.literal("PreToolUse"),
  tool_name: z.string().min(1).max(300),
  tool_input: z.unknown(),
  tool_use_id: z.string().min(1).max(200),
});

export const PostToolUseInput = z.looseObject({
  ...Common,
  hook_event_name: z.enum(["PostToolUse", "PostToolUseFailure"]),
  tool_name: z.string().min(1).max(300),
  tool_input: z.unknown(),
  tool_use_id: z.string().min(1).max(200),
  tool_response: z.unknown().optional(),
  error: z.unknown().optional(),
  /** PostToolUseFailure: true when the user interrupted the tool (its effect is unknown). */
  is_interrupt: z.boolean().optional(),
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
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "(root)";
    throw new HookInputError(`${field}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data as HookInput;
}
