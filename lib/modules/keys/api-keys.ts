// API keys (docs/architecture.md#, #security): the secret is shown once and stored only as its sha256 hash.
// An operator key is a person's key: it carries the bound user's CURRENT membership role, read on
// every call, so lowering the user's role (or removing the membership) disarms the key at once.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { pool, preparedName } from "../../platform/db/pool";
import { hashKeySecret, newKeySecret } from "../../platform/auth/api-key";
import { newId } from "../../platform/ids";
import { badRequest, notFound } from "../../platform/errors";
import { KEY_KINDS, ROLES, type KeyKind, type Role } from "../../control/types";
import { ACTIONS } from "../../control/authz";
import { appendAudit } from "../audit/audit";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { assertTeam, authorize } from "../../platform/auth/authorize";

export interface ApiKeyView {
  id: string;
  teamId: string;
  kind: KeyKind;
  name: string;
  userId: string | null;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** At read time: a key past its expiry is refused like a revoked one, and listed as such. */
  status: "active" | "expired" | "revoked";
}

export interface CreateApiKeyInput {
  teamId: string;
  kind: KeyKind;
  name: string;
  userId?: string | null;
  scopes?: string[];
  expiresAt?: Date | string | null;
}

type KeyRow = {
  id: string;
  teamId: string;
  kind: string;
  name: string;
  userId: string | null;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
};

function view(k: KeyRow): ApiKeyView {
  return {
    id: k.id,
    teamId: k.teamId,
    kind: k.kind as KeyKind,
    name: k.name,
    userId: k.userId,
    scopes: k.scopes,
    createdAt: k.createdAt.toISOString(),
    expiresAt: k.expiresAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    status: k.revokedAt ? "revoked" : k.expiresAt && k.expiresAt.getTime() <= Date.now() ? "expired" : "active",
  };
}

const VALID_SCOPES = new Set<string>(["*", ...ACTIONS]);

/** Creates a key and returns its secret ONCE; only the hash is stored. */
export async function createApiKey(p: Principal, input: CreateApiKeyInput): Promise<ApiKeyView & { secret: string }> {
  authorize(p, "key.manage");
  assertTeam(p, input.teamId, "team");
  if (!(KEY_KINDS as readonly string[]).includes(input.kind)) throw badRequest(`kind: must be one of ${KEY_KINDS.join(", ")}`);
  const name = input.name?.trim();
  if (!name) throw badRequest("name: required");
  const scopes = input.scopes ?? [];
  const badScope = scopes.find((s) => !VALID_SCOPES.has(s));
  if (badScope !== undefined) throw badRequest(`scopes: unknown scope "${badScope}"`);
  const expiresAt = input.expiresAt == null ? null : new Date(input.expiresAt);
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw badRequest("expiresAt: not a valid time");
  if (input.kind === "operator" && !input.userId) throw badRequest("userId: an operator key must be bound to a user");
  if (input.kind !== "operator" && input.userId) throw badRequest("userId: only operator keys are bound to a user");

  const secret = newKeySecret(input.kind);
  const row = await prisma().$transaction(async (tx) => {
    const team = await tx.team.findUnique({ where: { id: input.teamId }, select: { id: true } });
    if (!team) throw notFound("team");
    if (input.userId) {
      const m = await tx.membership.findUnique({ where: { teamId_userId: { teamId: input.teamId, userId: input.userId } } });
      if (!m) throw badRequest("userId: the user is not a member of this team");
    }
    const k = await tx.apiKey.create({
      data: {
        id: newId("key"),
        teamId: input.teamId,
        userId: input.userId ?? null,
        kind: input.kind,
        name,
        scopes,
        secretHash: hashKeySecret(secret),
        expiresAt,
      },
    });
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "key.create",
      target: k.id,
      after: { kind: k.kind, name: k.name, userId: k.userId, scopes: k.scopes, expiresAt: k.expiresAt?.toISOString() ?? null },
    });
    return k;
  });
  return { ...view(row), secret };
}

export async function listApiKeys(p: Principal, filter: { teamId: string; includeRevoked?: boolean }): Promise<ApiKeyView[]> {
  authorize(p, "key.manage");
  assertTeam(p, filter.teamId, "team");
  const rows = await prisma().apiKey.findMany({
    where: { teamId: filter.teamId, ...(filter.includeRevoked ? {} : { revokedAt: null }) },
    orderBy: { createdAt: "asc" },
  });
  return rows.map(view);
}

/** Revocation takes effect on the next call: every request re-reads the key. */
export async function revokeApiKey(p: Principal, keyId: string): Promise<ApiKeyView> {
  authorize(p, "key.manage");
  return prisma().$transaction(async (tx) => {
    const k = await tx.apiKey.findUnique({ where: { id: keyId } });
    if (!k) throw notFound("key");
    assertTeam(p, k.teamId, "key");
    if (k.revokedAt) return view(k);
    const revoked = await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    await appendAudit(tx, {
      teamId: k.teamId,
      actor: actorOf(p),
      action: "key.revoke",
      target: k.id,
      before: { revokedAt: null },
      after: { revokedAt: revoked.revokedAt?.toISOString() },
    });
    return view(revoked);
  });
}

type AuthRow = {
  id: string;
  team_id: string;
  kind: string;
  scopes: string[];
  user_id: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  role: string | null;
};

/** last_used_at is advisory; writing it at most once a minute keeps the hot path read-only. */
const LAST_USED_GRANULARITY_MS = 60_000;

/** A verified key: its principal and its expiry (checked again on every use of a cached copy). */
export interface VerifiedKey {
  principal: Extract<Principal, { type: "key" }>;
  expiresAt: Date | null;
}

/**
 * Resolves a bearer secret into a key Principal, or null (unknown, revoked, expired). One statement:
 * the key and the bound user's current role in the key's team. A machine key has role null.
 */
export async function authenticateKey(secret: string, now: Date = new Date()): Promise<Extract<Principal, { type: "key" }> | null> {
  if (!secret || secret.length > 512) return null;
  return (await verifyKeyHash(hashKeySecret(secret), now))?.principal ?? null;
}

/** authenticateKey by the secret's sha256 hash (the API computes it once per request). */
export async function verifyKeyHash(secretHash: string, now: Date = new Date()): Promise<VerifiedKey | null> {
  // On the raw pool as a named prepared statement: every authenticated request pays this, and Prisma's
  // per-query work was a large part of the API process's CPU per request (docs/design/api-process.md).
  const { rows } = await pool().query<AuthRow>({
    ...preparedName("quiesce_authenticate_key"),
    text: `SELECT k.id, k.team_id, k.kind::text AS kind, k.scopes, k.user_id, k.expires_at, k.revoked_at, k.last_used_at,
                  CASE WHEN u.disabled_at IS NULL THEN m.role::text END AS role
             FROM api_keys k
             LEFT JOIN memberships m ON m.team_id = k.team_id AND m.user_id = k.user_id
             LEFT JOIN users u ON u.id = k.user_id
            WHERE k.secret_hash = $1`,
    values: [secretHash],
  });
  const k = rows[0];
  if (!k || k.revoked_at || (k.expires_at && k.expires_at.getTime() <= now.getTime())) return null;
  if (!k.last_used_at || now.getTime() - k.last_used_at.getTime() > LAST_USED_GRANULARITY_MS) {
    await prisma()
      .apiKey.update({ where: { id: k.id }, data: { lastUsedAt: now } })
      .catch(() => undefined);
  }
  const role = k.kind === "operator" && k.user_id && k.role && (ROLES as readonly string[]).includes(k.role) ? (k.role as Role) : null;
  return {
    principal: { type: "key", keyId: k.id, teamId: k.team_id, kind: k.kind as KeyKind, scopes: k.scopes, userId: k.user_id, role },
    expiresAt: k.expires_at,
  };
}
