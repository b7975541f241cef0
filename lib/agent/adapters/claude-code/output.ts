// What the hook prints on stdout (exit 0). Shapes per the Claude Code hooks reference:
// PreToolUse decision control uses hookSpecificOutput.permissionDecision "deny" with a reason; the
// universal `continue: false` + `stopReason` stops Claude entirely (used when the run is killed).
// An allowed call prints NOTHING: "allow" would bypass the user's own permission rules, and Quiesce
// only ever takes permission away.

export type HookOutput = Record<string, unknown>;

/** `tell`: also shown to the user (the deny's reason goes to Claude). */
export function denyToolUse(reason: string, stop?: string, tell?: string): HookOutput {
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
    ...(stop ? { continue: false, stopReason: stop } : {}),
    ...(tell ? { systemMessage: tell } : {}),
  };
}

/** Hands the call to the person at the terminal (Claude Code's own permission prompt), with the reason shown to them. */
export function askUser(reason: string): HookOutput {
  return {
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: reason },
    systemMessage: reason,
  };
}

export function stopClaude(stop: string): HookOutput {
  return { continue: false, stopReason: stop };
}

export const STOP_PREFIX = "Quiesce: this run was stopped by an operator";
