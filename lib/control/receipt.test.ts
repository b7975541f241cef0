import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { parse } from "yaml";
import { buildReceipt, decideReceipt, inReadingOrder, receiptYaml, verifyReceiptBody, type ReceiptFacts, type ReceiptSettlementFact } from "./receipt";
import { canonicalJson } from "./canonical";
import { SETTLED_STATES } from "./types";

const t0 = new Date("2026-08-16T10:51:04.018Z");

const settlement: fc.Arbitrary<ReceiptSettlementFact> = fc.record({
  operationId: fc.string({ minLength: 1, maxLength: 12 }),
  tool: fc.constant("deployment.reserve_preview"),
  providerName: fc.option(fc.constant("deploy-sim"), { nil: null }),
  providerJob: fc.option(fc.constant("preview-7712"), { nil: null }),
  stateAtBarrier: fc.constant("running"),
  cancelRequestedAt: fc.constant(t0),
  providerResponse: fc.option(fc.constantFrom("accepted", "rejected", "unsupported", "unreachable"), { nil: null }),
  effectExpected: fc.constant("absence"),
  effectObserved: fc.option(fc.constantFrom("present", "absent", "unavailable"), { nil: null }),
  effectCheckedAt: fc.option(fc.constant(t0), { nil: null }),
  settledState: fc.option(fc.constantFrom(...SETTLED_STATES), { nil: null }),
  settledAt: fc.option(fc.integer({ min: 0, max: 100_000 }).map((ms) => new Date(t0.getTime() + ms)), { nil: null }),
  settledReason: fc.constant(null),
});

const facts: fc.Arbitrary<ReceiptFacts> = fc.record({
  barrierId: fc.constant("stop_x"),
  runId: fc.constant("run_x"),
  version: fc.integer({ min: 1, max: 5 }),
  previousDigest: fc.constant(null),
  requestedAt: fc.constant(t0),
  requestedBy: fc.constant("user:thomas"),
  reason: fc.constant("wrong_commit_detected"),
  rootLease: fc.constantFrom("revoked" as const, "active" as const, "none" as const),
  descendantLeasesRevoked: fc.nat(5),
  activeLeases: fc.nat(2),
  currentEpoch: fc.integer({ min: 1, max: 50 }),
  queuedCancelled: fc.nat(10),
  scheduledCancelled: fc.nat(3),
  retriesCancelled: fc.nat(3),
  settlements: fc.array(settlement, { maxLength: 6 }),
  reconciliations: fc.array(fc.record({ operationId: fc.string(), assignee: fc.option(fc.emailAddress(), { nil: null }), status: fc.constantFrom("awaiting_assignee", "assigned", "resolved"), cause: fc.constant("provider_status_unavailable"), resolution: fc.constant(null) }), { maxLength: 3 }),
  effectReceipts: fc.constant([]),
  observed: fc.option(fc.record({ meaning: fc.constant("turn_interrupted"), at: fc.constant(t0) }), { nil: null }),
  lateRequestsDenied: fc.nat(4),
  quietPeriodSeconds: fc.nat(60),
  verifiedAt: fc.constant(new Date(t0.getTime() + 35_000)),
});

describe("decideReceipt", () => {
  test("stopped_and_quiet exactly when pending, unknown and active leases are all zero", () => {
    fc.assert(fc.property(fc.nat(3), fc.nat(3), fc.nat(3), (pending, unknown, activeLeases) => {
      const d = decideReceipt({ pending, unknown, activeLeases });
      expect(d === "stopped_and_quiet").toBe(pending === 0 && unknown === 0 && activeLeases === 0);
    }));
  });
});

describe("buildReceipt", () => {
  test("counts, decision and digest agree with the facts", () => {
    fc.assert(fc.property(facts, (f) => {
      const { body, decision, canonical } = buildReceipt(f);
      const unknown = f.settlements.filter((s) => s.settledState === "unknown").length;
      const pending = f.settlements.filter((s) => s.settledState === null).length;
      expect(body.effects.unknown).toBe(unknown);
      expect(body.work.in_flight_pending).toBe(pending);
      expect(body.effects.completed_and_verified + body.effects.cancelled_without_effect + unknown + pending).toBe(f.settlements.length);
      expect(decision).toBe(decideReceipt({ pending, unknown, activeLeases: f.activeLeases }));
      expect(body.decision).toBe(decision);
      expect(verifyReceiptBody(body).ok).toBe(true);
      expect(canonical.includes('"digest"')).toBe(false);
      // Any change to the body breaks verification.
      expect(verifyReceiptBody({ ...body, decision: decision === "stopped_and_quiet" ? "stop_incomplete" : "stopped_and_quiet" }).ok).toBe(false);
    }));
  });

  test("an incomplete stop names who holds each reconciliation", () => {
    fc.assert(fc.property(facts, (f) => {
      const { body } = buildReceipt(f);
      expect(body.reconciliation.map((r) => r.assignee)).toEqual(f.reconciliations.map((r) => r.assignee ?? "unassigned"));
    }));
  });

  test("YAML rendering carries the same body, and the JSON survives a round trip with its digest", () => {
    fc.assert(fc.property(facts, (f) => {
      const { body } = buildReceipt(f);
      expect(parse(receiptYaml(body)).stop_receipt).toEqual(JSON.parse(JSON.stringify(body)));
      expect(verifyReceiptBody(JSON.parse(JSON.stringify(body))).ok).toBe(true);
    }), { numRuns: 30 });
  });

  test("an unacknowledged stop reads as uncertain, never as observed", () => {
    fc.assert(fc.property(facts, (f) => {
      const { body } = buildReceipt({ ...f, observed: null });
      expect(body.observed_by_target).toBe("uncertain");
    }), { numRuns: 10 });
  });
});

describe("reading order", () => {
  test("a body read back in any key order is presented in the article's order, digest unchanged", () => {
    const shuffled = { decision: "stopped_and_quiet", work: { scheduled_retries_cancelled: 2, queued_cancelled: 3 }, run_id: "r", barrier_id: "b", digest: "x" };
    const ordered = inReadingOrder(shuffled);
    expect(Object.keys(ordered)).toEqual(["barrier_id", "run_id", "work", "decision", "digest"]);
    expect(Object.keys(ordered.work)).toEqual(["queued_cancelled", "scheduled_retries_cancelled"]);
    expect(canonicalJson(ordered)).toBe(canonicalJson(shuffled));
  });
});
