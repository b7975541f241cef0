// The API process's cache of verified API keys (docs/security/identity.md#api-key-cache): key hash → principal,
// so an authenticated read, registration or event report does not pay the key lookup every time. What
// bounds how long a change of authority can go unseen:
//  - a notice: triggers on api_keys, memberships and users (function lib/platform/db/sql/quiesce_auth_changed.sql)
//    NOTIFY `quiesce_auth` when a key is revoked or changed, a role changes, a user is disabled or a
//    key, membership or user is removed; this process's one LISTEN connection (lib/platform/db/listen.ts) hears
//    it and the whole cache is emptied;
//  - a hard age: an entry is used at most QUIESCE_API_KEY_CACHE_MS (≤ 5 s) after the read that made it
//    began, so a lost notice costs at most that;
//  - deny-safe when deaf: while the LISTEN connection is down (and until it is back, which empties the
//    cache again) every request reads the key from the database, as without a cache;
//  - a notice (or a reconnect, or a refused read) that arrives while a read is on its way keeps that
//    read's answer out of the cache: it may predate the change. So once a refusal has been answered, no
//    request begun after it is served from an older read.
// Expiry (`expires_at`) is checked on every use. Unknown keys are never cached (the bad-key throttle
// counts them). The gate does not come here: it authenticates inside its own SQL statement.
import "server-only";
import { verifyKeyHash, type VerifiedKey } from "../modules/keys";
import type { Principal } from "../platform/auth/principal";
import type { AuthEvent } from "../platform/db/listen";
import type { ResyncEvent } from "../schemas/control-event";

type KeyPrincipal = Extract<Principal, { type: "key" }>;

/** What the cache needs of the process's LISTEN connection (lib/platform/db/listen.ts ControlListener). */
export interface AuthNotices {
  readonly listening: boolean;
  subscribeAuth(handler: (e: AuthEvent | ResyncEvent) => void): Promise<() => void>;
}

interface Entry {
  principal: KeyPrincipal;
  expiresAt: number | null;
  /** Not used at or after this time (the read's start + the bound). */
  until: number;
}

/** More distinct keys than a deployment has agents would only be a flood: the oldest go first. */
const MAX_ENTRIES = 10_000;

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every notice and reconnect: a read begun under an older value is not cached. */
  private generation = 0;
  private unsubscribe: (() => void) | null = null;
  hits = 0;
  misses = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly notices: AuthNotices,
    private readonly verify: (hash: string, now: Date) => Promise<VerifiedKey | null> = verifyKeyHash,
  ) {}

  /** Subscribes to the notices; resolves once LISTEN is active (rejects when it cannot connect). */
  async start(): Promise<void> {
    this.unsubscribe = await this.notices.subscribeAuth(() => this.forgetAll());
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.forgetAll();
  }

  forgetAll(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private trusted(): boolean {
    return this.unsubscribe !== null && this.notices.listening;
  }

  async principal(hash: string): Promise<KeyPrincipal | null> {
    const now = Date.now();
    if (this.trusted()) {
      const e = this.entries.get(hash);
      if (e && now < e.until) {
        if (e.expiresAt !== null && e.expiresAt <= now) {
          this.entries.delete(hash);
          return null;
        }
        this.hits++;
        return e.principal;
      }
    } else if (this.entries.size > 0) this.forgetAll();
    this.misses++;
    const generation = this.generation;
    const v = await this.verify(hash, new Date(now));
    if (!v) {
      // A refusal is news the notice may not have brought yet: a read of the same key begun before it
      // (so possibly before the revocation committed) must not put the key back once this answer is out.
      this.generation++;
      this.entries.delete(hash);
      return null;
    }
    if (this.trusted() && generation === this.generation) {
      this.entries.delete(hash);
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { principal: v.principal, expiresAt: v.expiresAt?.getTime() ?? null, until: now + this.ttlMs });
    }
    return v.principal;
  }
}

const g = globalThis as unknown as { quiesceKeyCache?: KeyCache };

/** Turns the cache on in this process (the API process does, `quiesce api`); 0 leaves it off. */
export async function enableKeyCache(ttlMs: number, notices: AuthNotices): Promise<KeyCache | null> {
  g.quiesceKeyCache?.stop();
  g.quiesceKeyCache = undefined;
  if (ttlMs <= 0) return null;
  const cache = new KeyCache(ttlMs, notices);
  await cache.start();
  g.quiesceKeyCache = cache;
  return cache;
}

export function disableKeyCache(): void {
  g.quiesceKeyCache?.stop();
  g.quiesceKeyCache = undefined;
}

/** The principal of a key (by its secret's hash): from the cache when it is on, else from the database. */
export async function cachedAuthenticateKey(secret: string, hash: string): Promise<KeyPrincipal | null> {
  if (!secret || secret.length > 512) return null;
  const cache = g.quiesceKeyCache;
  if (cache) return cache.principal(hash);
  return (await verifyKeyHash(hash))?.principal ?? null;
}
