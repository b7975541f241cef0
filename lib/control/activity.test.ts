import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { ACTIVITIES, lastHeardAt, runActivity, STALE_AFTER_MS, staleAfterMs, WORKING_WITHIN_MS, type ActivityFacts } from "./activity";
import { runStatus } from "./fleet";
import { LIFECYCLES } from "./types";

const NOW = 10_000_000_000;
const past = (max: number) => fc.integer({ min: 0, max }).map((d) => NOW - d);
const factsArb: fc.Arbitrary<ActivityFacts> = fc.record({
  lifecycle: fc.constantFrom(...LIFECYCLES),
  finishedAt: fc.option(past(3_600_000)),
  running: fc.constantFrom(0, 0, 1, 3),
  createdAt: past(4 * 3_600_000),
  lastHeartbeatAt: fc.option(past(3_600_000)),
  lastDecisionAt: fc.option(past(3_600_000)),
  lease: fc.option(
    fc.record({
      validUntil: fc.integer({ min: NOW - 3_600_000, max: NOW + 86_400_000 }),
      ttlSeconds: fc.constantFrom(30, 300, 3600, 86_400),
      revoked: fc.boolean(),
    }),
  ),
});
const live = (f: ActivityFacts): ActivityFacts => ({ ...f, lifecycle: "normal", finishedAt: null });

describe("runActivity", () => {
  test("killed, finished and paused are the run's status, whatever is in flight", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const s = runStatus(f);
        if (s !== "active") expect(runActivity(f, NOW)).toBe(s);
        else expect(["working", "idle", "stale"]).toContain(runActivity(f, NOW));
      }),
    );
  });

  test("a live run with calls in flight is working, however long it has been silent", () => {
    fc.assert(
      fc.property(factsArb, fc.integer({ min: 1, max: 5 }), (f, n) => {
        expect(runActivity({ ...live(f), running: n }, NOW)).toBe("working");
      }),
    );
  });

  test("a gate decision within the working window is working; nothing in flight and none is never working", () => {
    fc.assert(
      fc.property(factsArb, fc.integer({ min: 0, max: WORKING_WITHIN_MS - 1 }), (f, ago) => {
        expect(runActivity({ ...live(f), lastDecisionAt: NOW - ago }, NOW)).toBe("working");
        const quiet = { ...live(f), running: 0, lastDecisionAt: NOW - WORKING_WITHIN_MS - ago };
        expect(runActivity(quiet, NOW)).not.toBe("working");
      }),
    );
  });

  test("idle only while the lease holds and it was heard from within the stale window; stale otherwise", () => {
    fc.assert(
      fc.property(factsArb, (f0) => {
        const f = { ...live(f0), running: 0 };
        const a = runActivity(f, NOW);
        if (a === "working") return;
        const leaseHolds = f.lease !== null && !f.lease.revoked && f.lease.validUntil > NOW;
        const recent = NOW - lastHeardAt(f) <= staleAfterMs(f);
        expect(a).toBe(leaseHolds && recent ? "idle" : "stale");
      }),
    );
  });

  test("hearing from a run later never makes it less live (stale → idle → working, never back)", () => {
    const rank = { stale: 0, idle: 1, working: 2 } as Record<string, number>;
    fc.assert(
      fc.property(factsArb, past(3_600_000), (f0, at) => {
        const f = live(f0);
        const later = { ...f, lastDecisionAt: Math.max(f.lastDecisionAt ?? -Infinity, at) };
        expect(rank[runActivity(later, NOW)]!).toBeGreaterThanOrEqual(rank[runActivity(f, NOW)]!);
      }),
    );
  });

  test("last heard from is the latest of registration, heartbeat, decision and lease renewal, never in the lease's future", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const h = lastHeardAt(f);
        expect(h).toBeGreaterThanOrEqual(f.createdAt);
        for (const t of [f.lastHeartbeatAt, f.lastDecisionAt]) if (t !== null) expect(h).toBeGreaterThanOrEqual(t);
        if (f.lease) expect(h).toBeGreaterThanOrEqual(f.lease.validUntil - f.lease.ttlSeconds * 1000);
      }),
    );
  });

  test("the examples in words", () => {
    const base: ActivityFacts = {
      lifecycle: "normal",
      finishedAt: null,
      running: 0,
      createdAt: NOW - 2 * 3_600_000,
      lastHeartbeatAt: null,
      lastDecisionAt: null,
      lease: { validUntil: NOW + 20 * 3_600_000, ttlSeconds: 86_400, revoked: false },
    };
    // Calls in flight and never a heartbeat: working, heard from at its last gate call.
    expect(runActivity({ ...base, running: 2, lastDecisionAt: NOW - 5 * 60_000 }, NOW)).toBe("working");
    expect(lastHeardAt({ ...base, running: 2, lastDecisionAt: NOW - 5 * 60_000 })).toBe(NOW - 5 * 60_000);
    // Nothing in flight, last call five minutes ago: idle.
    expect(runActivity({ ...base, lastDecisionAt: NOW - 5 * 60_000 }, NOW)).toBe("idle");
    // Nothing in flight, an hour-old heartbeat: stale.
    expect(runActivity({ ...base, lastHeartbeatAt: NOW - 3_600_000 }, NOW)).toBe("stale");
    // A short lease's idle window passed before the clear threshold.
    expect(staleAfterMs({ lease: { validUntil: NOW, ttlSeconds: 60, revoked: false } })).toBe(60_000);
    expect(staleAfterMs({ lease: null })).toBe(STALE_AFTER_MS);
    // A revoked or expired lease cannot call: stale even if heard from a moment ago.
    expect(runActivity({ ...base, lastHeartbeatAt: NOW - 1000, lease: { ...base.lease!, revoked: true } }, NOW)).toBe("stale");
    expect(ACTIVITIES).toContain(runActivity({ ...base, lifecycle: "paused", running: 1 }, NOW));
  });
});
