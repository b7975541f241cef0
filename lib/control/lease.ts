// Leases (docs/architecture.md#data, docs/architecture.md#barriers): authority held by a run. A child lease is derived from its parent's:
// its scopes are a subset of the parent's and its validUntil is never later than the parent's.
//
// Decisions (documented in docs/api.md):
// - Scopes asked beyond the parent's are REJECTED, not silently intersected: a caller that believes it
//   holds a scope it does not should learn it at registration, not at its first denied call.
// - A TTL longer than the parent has left is CLAMPED to the parent's validUntil: a shorter life is
//   always safe, and "as long as my parent" is the common intent.
// - A revoked or expired parent lease cannot be derived from.
// - Scope "*" grants everything; a child of a "*" lease may ask for any scope. An omitted scope list
//   inherits the parent's scopes.

export const DEFAULT_LEASE_TTL_SECONDS = 3600;
export const MAX_LEASE_TTL_SECONDS = 7 * 24 * 3600;

export interface LeaseGrant {
  scopes: string[];
  /** epoch ms */
  validUntil: number;
}

export interface ParentLease extends LeaseGrant {
  id: string;
  /** Root lease first, ending with this lease. */
  path: string[];
  revokedAt: number | null;
}

export interface LeaseRequest {
  scopes?: string[];
  ttlSeconds?: number;
}

export type LeaseRefusalCode = "parent_revoked" | "parent_expired" | "scope_not_held" | "bad_ttl" | "bad_scope";

export type LeaseResult =
  | { ok: true; lease: LeaseGrant }
  | { ok: false; code: LeaseRefusalCode; message: string; field?: string };

const SCOPE_RE = /^[A-Za-z0-9_.:*/-]{1,100}$/;

/** True when every scope of `child` is held by `parent` ("*" in the parent holds everything). */
export function scopesWithin(child: readonly string[], parent: readonly string[]): boolean {
  if (parent.includes("*")) return true;
  return child.every((s) => parent.includes(s));
}

function checkRequest(req: LeaseRequest): LeaseResult | null {
  if (req.ttlSeconds !== undefined && (!Number.isInteger(req.ttlSeconds) || req.ttlSeconds <= 0 || req.ttlSeconds > MAX_LEASE_TTL_SECONDS)) {
    return { ok: false, code: "bad_ttl", field: "leaseTtlSeconds", message: `leaseTtlSeconds must be an integer between 1 and ${MAX_LEASE_TTL_SECONDS}` };
  }
  const bad = req.scopes?.find((s) => !SCOPE_RE.test(s));
  if (bad !== undefined) return { ok: false, code: "bad_scope", field: "scopes", message: `scope ${JSON.stringify(bad)} is not a valid scope name` };
  return null;
}

/** A root run's lease (no parent): scopes default to ["*"]. */
export function newRootLease(req: LeaseRequest, now: number): LeaseResult {
  const bad = checkRequest(req);
  if (bad) return bad;
  const scopes = dedupe(req.scopes ?? ["*"]);
  return { ok: true, lease: { scopes, validUntil: now + (req.ttlSeconds ?? DEFAULT_LEASE_TTL_SECONDS) * 1000 } };
}

export function deriveChildLease(parent: ParentLease, req: LeaseRequest, now: number): LeaseResult {
  const bad = checkRequest(req);
  if (bad) return bad;
  if (parent.revokedAt !== null) return { ok: false, code: "parent_revoked", field: "parentLeaseId", message: "the parent lease is revoked" };
  if (parent.validUntil <= now) return { ok: false, code: "parent_expired", field: "parentLeaseId", message: "the parent lease has expired" };
  const scopes = req.scopes === undefined ? [...parent.scopes] : dedupe(req.scopes);
  if (!scopesWithin(scopes, parent.scopes)) {
    const missing = scopes.filter((s) => !parent.scopes.includes(s));
    return { ok: false, code: "scope_not_held", field: "scopes", message: `the parent lease does not hold: ${missing.join(", ")}` };
  }
  const wanted = now + (req.ttlSeconds ?? DEFAULT_LEASE_TTL_SECONDS) * 1000;
  return { ok: true, lease: { scopes, validUntil: Math.min(wanted, parent.validUntil) } };
}

/** leases.path of a new lease: the parent's path followed by the new id. */
export function leasePath(parentPath: readonly string[] | null, id: string): string[] {
  return [...(parentPath ?? []), id];
}

function dedupe(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}
