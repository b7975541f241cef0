// Who is calling. Every exported lib/modules function takes a Principal first and authorizes it
// (lib/control/authz) before it reads or writes. A principal is always resolved fresh from the
// database (role, membership, key revocation) — never trusted from a token's claims.
import "server-only";
import type { KeyKind, Role } from "../../control/types";
import type { Caller } from "../../control/authz";

export type Principal =
  | { type: "key"; keyId: string; teamId: string; kind: KeyKind; scopes: string[]; userId: string | null; role: Role | null }
  | { type: "user"; userId: string; email: string; teamId: string; role: Role }
  /** Trusted in-process callers: the barrier engine, migrations, seeding, the CLI's admin commands. */
  | { type: "system"; name: string };

/** The actor string written to audit rows and `changedBy` columns. */
export function actorOf(p: Principal): string {
  switch (p.type) {
    case "key":
      return p.userId ? `user:${p.userId} via key:${p.keyId}` : `key:${p.keyId}`;
    case "user":
      return `user:${p.userId}`;
    case "system":
      return `system:${p.name}`;
  }
}

export function callerOf(p: Exclude<Principal, { type: "system" }>): Caller {
  return p.type === "user" ? { type: "user", role: p.role } : { type: "key", kind: p.kind, role: p.role, scopes: p.scopes };
}
