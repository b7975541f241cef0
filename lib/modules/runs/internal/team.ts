import "server-only";
import { badRequest } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";

/** The team a call acts in: the caller's own, or for the trusted system the one it names. */
export function teamFor(p: Principal, explicit?: string): string {
  if (p.type !== "system") return p.teamId;
  if (!explicit) throw badRequest("teamId: required for system callers");
  return explicit;
}
