// Leases: authority held by a run. A child lease is derived from its parent's: its scopes are a subset
// of the parent's and its validUntil is never later than the parent's.
//
// Renewal (docs/adapters.md, "Leases: renewal and lifetime"): a lease's TTL is an IDLE window, not a
// working limit. Every gate call, admission and heartbeat that is allowed renews the whole lease chain
// to `now + ttl`, never past the lease's maxValidUntil (creation
// + the team's maximum lifetime, and never past its parent's). Expiry therefore means "abandoned": no
// call for a whole TTL, or the team's maximum lifetime reached. The SQL gate (quiesce_gate) applies
// `renewChain` below; test/adapters/lease-renewal.test.ts checks both agree.
//
// Decisions:
// - Scopes asked beyond the parent's are REJECTED, not silently intersected: a caller that believes it
//   holds a scope it does not should learn it at registration, not at its first denied call.
// - A TTL longer than the parent has left is CLAMPED to the parent's validUntil: a shorter life is
//   always safe, and "as long as my parent" is the common intent.
// - A revoked or expired parent lease cannot be derived from.
// - Scope "*" grants everything; a child of a "*" lease may ask for any scope. An omitted scope list
//   inherits the parent's scopes.

/** The idle window when a registration names none: a day without a single call means abandoned. */
export const DEFAULT_LEASE_TTL_SECONDS = 24 * 3600;
/** The longest idle window a registration may ask for. */
export const MAX_LEASE_TTL_SECONDS = 7 * 24 * 3600;
/** A team's default maximum lease lifetime (teams.lease_max_lifetime_seconds): renewal stops there. */
export const DEFAULT_LEASE_MAX_LIFETIME_SECONDS = 7 * 24 * 3600;
/** The range a team's maximum lifetime may be set to. */
export const MIN_LEASE_MAX_LIFETIME_SECONDS = 1;
export const MAX_LEASE_MAX_LIFETIME_SECONDS = 30 * 24 * 3600;
/** Renewal writes only when less than this fraction of the TTL is left: a run idle for up to this share of
 * its TTL always keeps its lease, and renewal costs at most one write per tenth of a window. */
export const LEASE_RENEW_FRACTION = 0.9;

export interface LeaseGrant {
  scopes: string[];
  /** epoch ms */
  validUntil: number;
  /** The renewal window, seconds. */
  ttlSeconds: number;
  /** epoch ms: renewal never passes this (the team's maximum lifetime, clamped to the parent's). */
  maxValidUntil: number;
}

export interface ParentLease extends Omit<LeaseGrant, "ttlSeconds" | "maxValidUntil"> {
  /** epoch ms; null for a lease issued before renewal existed (never renewed past validUntil). */
  maxValidUntil: number | null;
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

export type LeaseResult = { ok: true; lease: LeaseGrant } | { ok: false; code: LeaseRefusalCode; message: string; field?: string };

const SCOPE_RE = /^[A-Za-z0-9_.:*/-]{1,100}$/;

/** True when every scope of `child` is held by `parent` ("*" in the parent holds everything). */
export function scopesWithin(child: readonly string[], parent: readonly string[]): boolean {
  if (parent.includes("*")) return true;
  return child.every((s) => parent.includes(s));
}

type LeaseRefusal = Extract<LeaseResult, { ok: false }>;

/**
 * What a lease derived from a held one passes first, in this order: a valid request, a held lease that
 * is not revoked (nor expired at `validAt`, when given), and scopes within the held lease's (its own when
 * the request names none) — a derived lease never widens authority. Returns the scopes, or the refusal.
 */
function deriveScopes(
  held: ParentLease,
  req: LeaseRequest,
  names: { field: string; holder: string },
  validAt?: number,
): { ok: true; scopes: string[] } | LeaseRefusal {
  const bad = checkRequest(req);
  if (bad) return bad;
  if (held.revokedAt !== null) return { ok: false, code: "parent_revoked", field: names.field, message: `${names.holder} is revoked` };
  if (validAt !== undefined && held.validUntil <= validAt)
    return { ok: false, code: "parent_expired", field: names.field, message: `${names.holder} has expired` };
  const scopes = req.scopes === undefined ? [...held.scopes] : dedupe(req.scopes);
  if (scopesWithin(scopes, held.scopes)) return { ok: true, scopes };
  const missing = scopes.filter((s) => !held.scopes.includes(s));
  return { ok: false, code: "scope_not_held", field: "scopes", message: `${names.holder} does not hold: ${missing.join(", ")}` };
}

function checkRequest(req: LeaseRequest): LeaseRefusal | null {
  if (
    req.ttlSeconds !== undefined &&
    (!Number.isInteger(req.ttlSeconds) || req.ttlSeconds <= 0 || req.ttlSeconds > MAX_LEASE_TTL_SECONDS)
  ) {
    return {
      ok: false,
      code: "bad_ttl",
      field: "leaseTtlSeconds",
      message: `leaseTtlSeconds must be an integer between 1 and ${MAX_LEASE_TTL_SECONDS}`,
    };
  }
  const bad = req.scopes?.find((s) => !SCOPE_RE.test(s));
  if (bad !== undefined)
    return { ok: false, code: "bad_scope", field: "scopes", message: `scope ${JSON.stringify(bad)} is not a valid scope name` };
  return null;
}

/** The team's policy for lease lifetimes. */
export interface LeasePolicy {
  maxLifetimeSeconds: number;
}
export const DEFAULT_LEASE_POLICY: LeasePolicy = { maxLifetimeSeconds: DEFAULT_LEASE_MAX_LIFETIME_SECONDS };

/** A root run's lease (no parent): scopes default to ["*"]. */
export function newRootLease(req: LeaseRequest, now: number, policy: LeasePolicy = DEFAULT_LEASE_POLICY): LeaseResult {
  const bad = checkRequest(req);
  if (bad) return bad;
  const scopes = dedupe(req.scopes ?? ["*"]);
  const ttlSeconds = req.ttlSeconds ?? DEFAULT_LEASE_TTL_SECONDS;
  const maxValidUntil = now + policy.maxLifetimeSeconds * 1000;
  return { ok: true, lease: { scopes, ttlSeconds, maxValidUntil, validUntil: Math.min(now + ttlSeconds * 1000, maxValidUntil) } };
}

export function deriveChildLease(
  parent: ParentLease,
  req: LeaseRequest,
  now: number,
  policy: LeasePolicy = DEFAULT_LEASE_POLICY,
): LeaseResult {
  const held = deriveScopes(parent, req, { field: "parentLeaseId", holder: "the parent lease" }, now);
  if (!held.ok) return held;
  const { scopes } = held;
  const ttlSeconds = req.ttlSeconds ?? DEFAULT_LEASE_TTL_SECONDS;
  const maxValidUntil = Math.min(now + policy.maxLifetimeSeconds * 1000, parent.maxValidUntil ?? parent.validUntil);
  const wanted = now + ttlSeconds * 1000;
  return { ok: true, lease: { scopes, ttlSeconds, maxValidUntil, validUntil: Math.min(wanted, parent.validUntil, maxValidUntil) } };
}

/** One lease of a chain, as renewal sees it. */
export interface RenewableLease {
  validUntil: number;
  ttlSeconds: number;
  /** null: issued before renewal existed, never renewed. */
  maxValidUntil: number | null;
  revokedAt: number | null;
}

/**
 * The chain's validUntil values after a renewal at `now` (root first, ending with the caller's lease).
 * A lease with less than LEASE_RENEW_FRACTION of its window left moves to `now + ttl`, capped by its own
 * maxValidUntil and by its parent's (new) validUntil, and never moves backwards; a revoked lease does not
 * move. Only applied when the gate allows (a hold or a deny renews nothing).
 */
export function renewChain(chain: readonly RenewableLease[], now: number): number[] {
  let parent = Infinity;
  return chain.map((l) => {
    const next =
      l.revokedAt === null && needsRenewal(l, now)
        ? Math.max(l.validUntil, Math.min(now + l.ttlSeconds * 1000, l.maxValidUntil ?? l.validUntil, parent))
        : l.validUntil;
    parent = next;
    return next;
  });
}

/** True when less than LEASE_RENEW_FRACTION of the lease's window is left and it can still grow. */
export function needsRenewal(l: RenewableLease, now: number): boolean {
  return l.validUntil < now + l.ttlSeconds * 1000 * LEASE_RENEW_FRACTION && l.validUntil < (l.maxValidUntil ?? l.validUntil);
}

/**
 * The lease of a run forked or resumed from another session (a child in the run tree, so the source's
 * kill, pause and breaker reach it, but a ROOT lease): a fork continues work, it does not add
 * authority, so its scopes stay within the source lease's; but its validity is its own, so resuming a
 * session whose lease went idle works, while a revoked source (killed) cannot be forked.
 */
export function deriveForkLease(
  source: ParentLease,
  req: LeaseRequest,
  now: number,
  policy: LeasePolicy = DEFAULT_LEASE_POLICY,
): LeaseResult {
  const held = deriveScopes(source, req, { field: "forkedFrom", holder: "the source session's lease" });
  if (!held.ok) return held;
  const root = newRootLease({ ttlSeconds: req.ttlSeconds }, now, policy);
  return root.ok ? { ok: true, lease: { ...root.lease, scopes: held.scopes } } : root;
}

/** leases.path of a new lease: the parent's path followed by the new id. */
export function leasePath(parentPath: readonly string[] | null, id: string): string[] {
  return [...(parentPath ?? []), id];
}

function dedupe(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}
