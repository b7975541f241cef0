import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { decideSettlement, nextCheckDelayMs, PROVIDER_RESPONSES, EFFECT_OBSERVATIONS, type SettlementFacts } from "./settlement";

const facts: fc.Arbitrary<SettlementFacts> = fc.record({
  hasProvider: fc.boolean(),
  providerResponse: fc.option(fc.constantFrom(...PROVIDER_RESPONSES), { nil: null }),
  check: fc.option(fc.record({ effect: fc.constantFrom(...EFFECT_OBSERVATIONS), final: fc.boolean() }), { nil: null }),
  executorClaim: fc.option(fc.record({ outcome: fc.constantFrom("succeeded" as const, "failed" as const) }), { nil: null }),
  deadlinePassed: fc.boolean(),
});

describe("decideSettlement", () => {
  test("cancelled_without_effect only with proof of absence from a provider that stopped", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const v = decideSettlement(f);
        if (v.kind === "settle" && v.state === "cancelled_without_effect") {
          expect(f.hasProvider).toBe(true);
          expect(f.check).toEqual({ effect: "absent", final: true });
        }
      }),
    );
  });

  test("a provider's accepted is never a settled state on its own", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const v = decideSettlement({ ...f, providerResponse: "accepted", check: null, executorClaim: null, deadlinePassed: false });
        expect(v.kind).toBe("retry");
      }),
    );
  });

  test("an effect seen present is completed_and_verified, whatever the provider answered", () => {
    fc.assert(
      fc.property(facts, fc.boolean(), (f, final) => {
        const v = decideSettlement({ ...f, hasProvider: true, check: { effect: "present", final } });
        expect(v).toMatchObject({ kind: "settle", state: "completed_and_verified" });
      }),
    );
  });

  test("an executor's claim settles nothing: the verdict is the same with or without it", () => {
    fc.assert(
      fc.property(facts, fc.constantFrom("succeeded" as const, "failed" as const), (f, outcome) => {
        expect(decideSettlement({ ...f, executorClaim: { outcome } })).toEqual(decideSettlement({ ...f, executorClaim: null }));
      }),
    );
  });

  test("without proof, the deadline yields unknown and never cancelled", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const unproven = { ...f, executorClaim: null, check: f.check && f.check.effect === "present" ? null : f.check };
        if (unproven.check?.effect === "absent" && unproven.check.final && unproven.hasProvider) return;
        const v = decideSettlement({ ...unproven, deadlinePassed: true });
        expect(v).toMatchObject({ kind: "settle", state: "unknown" });
        expect(decideSettlement({ ...unproven, deadlinePassed: false })).toEqual({ kind: "retry" });
      }),
    );
  });

  test("causes follow what failed", () => {
    const base: SettlementFacts = {
      hasProvider: true,
      providerResponse: "accepted",
      check: null,
      executorClaim: null,
      deadlinePassed: true,
    };
    expect(decideSettlement({ ...base, check: { effect: "unavailable", final: false } })).toMatchObject({
      cause: "provider_status_unavailable",
    });
    expect(decideSettlement({ ...base, providerResponse: "unreachable", check: { effect: "unavailable", final: false } })).toMatchObject({
      cause: "target_unreachable",
    });
    expect(decideSettlement({ ...base, check: { effect: "absent", final: false } })).toMatchObject({ cause: "cancel_unacknowledged" });
    expect(decideSettlement({ ...base, hasProvider: false })).toMatchObject({ cause: "cancel_unacknowledged" });
    // A plain tool call never reads a provider check, even a stray one.
    expect(decideSettlement({ ...base, hasProvider: false, check: { effect: "absent", final: true } })).toMatchObject({ state: "unknown" });
  });

  test("check delays never pass the deadline", () => {
    fc.assert(
      fc.property(fc.nat(50), fc.integer({ min: -1000, max: 100_000 }), (a, left) => {
        const d = nextCheckDelayMs(a, left);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(Math.max(0, left));
        expect(d).toBeLessThanOrEqual(2000);
      }),
    );
  });
});
