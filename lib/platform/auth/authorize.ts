// The one authorization check every exported dal function calls first (docs/architecture.md#, #conventions).
// System principals (barrier engine, seeding, admin CLI) are trusted in-process callers.
import "server-only";
import { isAllowed, type Action } from "../../control/authz";
import { forbidden, notFound } from "../errors";
import { callerOf, type Principal } from "./principal";

/** Throws 403 when the principal may not perform `action` at all (independent of any resource). */
export function authorize(p: Principal, action: Action): void {
  if (p.type === "system") return;
  if (!isAllowed(callerOf(p), action)) throw forbidden(`not allowed: ${action}`);
}

/** Another team's resource answers exactly like a missing one: 404, never 403 (nothing leaks). */
export function assertTeam(p: Principal, teamId: string, what: string): void {
  if (p.type === "system") return;
  if (p.teamId !== teamId) throw notFound(what);
}

/** The team a call acts on: the principal's own, or for the system principal the one it names. */
export function teamOf(p: Principal, explicitTeamId?: string): string | null {
  if (p.type === "system") return explicitTeamId ?? null;
  return p.teamId;
}
