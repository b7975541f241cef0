import { expect, test } from "vitest";
import fc from "fast-check";
import { deriveChildLease, MAX_LEASE_TTL_SECONDS, newRootLease, scopesWithin, type ParentLease } from "./lease";

const NOW = 1_800_000_000_000;
const scopeName = fc.constantFrom("deploy", "read", "write", "billing", "*");
const scopes = fc.uniqueArray(scopeName, { maxLength: 5 });
const request = fc.record({
  scopes: fc.option(scopes, { nil: undefined }),
  ttlSeconds: fc.option(fc.integer({ min: 1, max: MAX_LEASE_TTL_SECONDS }), { nil: undefined }),
}, { requiredKeys: [] });

function asParent(id: string, g: { scopes: string[]; validUntil: number }, parentPath: string[] = []): ParentLease {
  return { id, path: [...parentPath, id], scopes: g.scopes, validUntil: g.validUntil, revokedAt: null };
}

test("a child lease never outlives or out-scopes its parent, at any depth", () => {
  fc.assert(fc.property(request, fc.array(fc.record({ req: request, dt: fc.integer({ min: 0, max: 3_600_000 }) }), { maxLength: 6 }), (rootReq, levels) => {
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
  }));
});

test("asking for a scope the parent does not hold is rejected, naming the scope", () => {
  const parent = asParent("p", { scopes: ["read"], validUntil: NOW + 60_000 });
  expect(deriveChildLease(parent, { scopes: ["read", "deploy"] }, NOW)).toMatchObject({ ok: false, code: "scope_not_held", field: "scopes", message: expect.stringContaining("deploy") });
  expect(deriveChildLease(parent, { scopes: ["*"] }, NOW)).toMatchObject({ ok: false, code: "scope_not_held" });
  expect(deriveChildLease(parent, {}, NOW)).toMatchObject({ ok: true, lease: { scopes: ["read"], validUntil: NOW + 60_000 } });
});

test("a TTL beyond the parent's life is clamped; revoked or expired parents cannot delegate", () => {
  const parent = asParent("p", { scopes: ["*"], validUntil: NOW + 10_000 });
  expect(deriveChildLease(parent, { ttlSeconds: 3600, scopes: ["deploy"] }, NOW)).toEqual({ ok: true, lease: { scopes: ["deploy"], validUntil: NOW + 10_000 } });
  expect(deriveChildLease(parent, { ttlSeconds: 5 }, NOW)).toMatchObject({ ok: true, lease: { validUntil: NOW + 5000 } });
  expect(deriveChildLease({ ...parent, revokedAt: NOW - 1 }, {}, NOW)).toMatchObject({ ok: false, code: "parent_revoked" });
  expect(deriveChildLease(parent, {}, NOW + 10_000)).toMatchObject({ ok: false, code: "parent_expired" });
  expect(deriveChildLease(parent, { ttlSeconds: 0 }, NOW)).toMatchObject({ ok: false, code: "bad_ttl", field: "leaseTtlSeconds" });
  expect(deriveChildLease(parent, { scopes: ["has space"] }, NOW)).toMatchObject({ ok: false, code: "bad_scope", field: "scopes" });
});
