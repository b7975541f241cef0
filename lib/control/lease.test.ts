import { expect, test } from "vitest";
import fc from "fast-check";
import {
  deriveChildLease,
  MAX_LEASE_TTL_SECONDS,
  newRootLease,
  renewChain,
  scopesWithin,
  type ParentLease,
  type RenewableLease,
} from "./lease";

const NOW = 1_800_000_000_000;
const scopeName = fc.constantFrom("deploy", "read", "write", "billing", "*");
const scopes = fc.uniqueArray(scopeName, { maxLength: 5 });
const request = fc.record(
  {
    scopes: fc.option(scopes, { nil: undefined }),
    ttlSeconds: fc.option(fc.integer({ min: 1, max: MAX_LEASE_TTL_SECONDS }), { nil: undefined }),
  },
  { requiredKeys: [] },
);

function asParent(id: string, g: { scopes: string[]; validUntil: number; maxValidUntil?: number }, parentPath: string[] = []): ParentLease {
  return {
    id,
    path: [...parentPath, id],
    scopes: g.scopes,
    validUntil: g.validUntil,
    maxValidUntil: g.maxValidUntil ?? null,
    revokedAt: null,
  };
}

test("a child lease never outlives or out-scopes its parent, at any depth", () => {
  fc.assert(
    fc.property(
      request,
      fc.array(fc.record({ req: request, dt: fc.integer({ min: 0, max: 3_600_000 }) }), { maxLength: 6 }),
      (rootReq, levels) => {
        const root = newRootLease(rootReq, NOW);
        if (!root.ok) return;
        let parent = asParent("l0", root.lease);
        let now = NOW;
        const ancestors = [parent];
        levels.forEach((lv, i) => {
          now += lv.dt;
          const r = deriveChildLease(parent, lv.req, now);
          if (!r.ok) {
            expect(["parent_expired", "scope_not_held"]).toContain(r.code);
            return;
          }
          for (const a of ancestors) {
            expect(r.lease.validUntil).toBeLessThanOrEqual(a.validUntil);
            expect(scopesWithin(r.lease.scopes, a.scopes)).toBe(true);
          }
          parent = asParent(`l${i + 1}`, r.lease, parent.path);
          ancestors.push(parent);
        });
      },
    ),
  );
});

test("asking for a scope the parent does not hold is rejected, naming the scope", () => {
  const parent = asParent("p", { scopes: ["read"], validUntil: NOW + 60_000 });
  expect(deriveChildLease(parent, { scopes: ["read", "deploy"] }, NOW)).toMatchObject({
    ok: false,
    code: "scope_not_held",
    field: "scopes",
    message: expect.stringContaining("deploy"),
  });
  expect(deriveChildLease(parent, { scopes: ["*"] }, NOW)).toMatchObject({ ok: false, code: "scope_not_held" });
  expect(deriveChildLease(parent, {}, NOW)).toMatchObject({ ok: true, lease: { scopes: ["read"], validUntil: NOW + 60_000 } });
});

test("a TTL beyond the parent's life is clamped; revoked or expired parents cannot delegate", () => {
  const parent = asParent("p", { scopes: ["*"], validUntil: NOW + 10_000 });
  expect(deriveChildLease(parent, { ttlSeconds: 3600, scopes: ["deploy"] }, NOW)).toMatchObject({
    ok: true,
    lease: { scopes: ["deploy"], validUntil: NOW + 10_000 },
  });
  expect(deriveChildLease(parent, { ttlSeconds: 5 }, NOW)).toMatchObject({ ok: true, lease: { validUntil: NOW + 5000 } });
  expect(deriveChildLease({ ...parent, revokedAt: NOW - 1 }, {}, NOW)).toMatchObject({ ok: false, code: "parent_revoked" });
  expect(deriveChildLease(parent, {}, NOW + 10_000)).toMatchObject({ ok: false, code: "parent_expired" });
  expect(deriveChildLease(parent, { ttlSeconds: 0 }, NOW)).toMatchObject({ ok: false, code: "bad_ttl", field: "leaseTtlSeconds" });
  expect(deriveChildLease(parent, { scopes: ["has space"] }, NOW)).toMatchObject({ ok: false, code: "bad_scope", field: "scopes" });
});

// A chain as registration builds it: every lease within its parent's validUntil and maxValidUntil.
const chainArb = fc
  .array(
    fc.record({
      ttlSeconds: fc.integer({ min: 1, max: 7 * 24 * 3600 }),
      lifetime: fc.integer({ min: 60, max: 30 * 24 * 3600 }),
      age: fc.integer({ min: 0, max: 40 * 24 * 3600 }),
      revoked: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((levels) => {
    const out: RenewableLease[] = [];
    for (const lv of levels) {
      const p = out.at(-1);
      const created = NOW - lv.age * 1000;
      const maxValidUntil = Math.min(created + lv.lifetime * 1000, p ? (p.maxValidUntil ?? p.validUntil) : Infinity);
      const validUntil = Math.min(created + lv.ttlSeconds * 1000, maxValidUntil, p?.validUntil ?? Infinity);
      out.push({ ttlSeconds: lv.ttlSeconds, maxValidUntil, validUntil, revokedAt: lv.revoked ? created : null });
    }
    return out;
  });

test("renewal never shortens a lease, never passes its maximum lifetime, and keeps every child within its parent", () => {
  fc.assert(
    fc.property(chainArb, fc.integer({ min: 0, max: 10 * 24 * 3600 }), (chain, dt) => {
      const now = NOW + dt * 1000;
      const next = renewChain(chain, now);
      next.forEach((v, i) => {
        const l = chain[i]!;
        expect(v).toBeGreaterThanOrEqual(l.validUntil);
        expect(v).toBeLessThanOrEqual(Math.max(l.validUntil, l.maxValidUntil ?? l.validUntil));
        if (v > l.validUntil) {
          expect(l.revokedAt).toBeNull();
          expect(v).toBeLessThanOrEqual(now + l.ttlSeconds * 1000);
        }
        if (i > 0) expect(v).toBeLessThanOrEqual(next[i - 1]!);
      });
    }),
  );
});

test("an active chain is renewed to a full window, until the maximum lifetime", () => {
  const H = 3_600_000;
  const chain: RenewableLease[] = [
    { validUntil: NOW + H / 4, ttlSeconds: 3600, maxValidUntil: NOW + 10 * H, revokedAt: null },
    { validUntil: NOW + H / 4, ttlSeconds: 3600, maxValidUntil: NOW + 10 * H, revokedAt: null },
  ];
  expect(renewChain(chain, NOW)).toEqual([NOW + H, NOW + H]);
  // More than 90% of the window left: nothing is rewritten.
  expect(
    renewChain(
      chain.map((l) => ({ ...l, validUntil: NOW + 0.95 * H })),
      NOW,
    ),
  ).toEqual([NOW + 0.95 * H, NOW + 0.95 * H]);
  // Near the maximum lifetime: capped there; a legacy lease (no maximum) never moves.
  expect(renewChain([{ ...chain[0]!, maxValidUntil: NOW + H / 2 }], NOW)).toEqual([NOW + H / 2]);
  expect(renewChain([{ ...chain[0]!, maxValidUntil: null }], NOW)).toEqual([NOW + H / 4]);
});
