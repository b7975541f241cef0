// Property tests of the pure evidence model: I1 (stopped_and_quiet only when everything holds), I5 (a
// rung is done exactly when its fact holds, checked against an independent oracle), honest sentences,
// and the one serializer / verifier.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { parse } from "yaml";
import { deriveEvidence, type EvidenceFacts, type OperationFact } from "./model";
import { buildReceipt, inReadingOrder, serializeReceipt, verifyReceipt } from "./receipt";
import { canonicalJson } from "../canonical";
import { OPERATION_STATES, type OperationState } from "../types";
import { UNSUPERVISED_SENTENCE, type EnvironmentEvidence } from "./environment";
import { i1Violation, rungFacts } from "../../../test/support/evidence-oracle";

const t0 = Date.UTC(2026, 7, 16, 10, 51, 4);
const at = (ms: number) => new Date(t0 + ms);
/** What every barrier of these facts shares: one root run killed at t0, nothing queued behind it. */
const BARRIER = {
  id: "stop_x",
  runId: "run_0",
  requestedAt: at(0),
  requestedBy: "user:u1",
  newEpoch: 2,
  runsKilled: 1,
  leasesRevoked: 1,
  queuedCancelled: 0,
  scheduledCancelled: 0,
  retriesCancelled: 0,
  quietPeriodSeconds: 2,
};
const optDate = fc.option(fc.integer({ min: 0, max: 60_000 }).map(at), { nil: null });

/** A supervisor's report as `quiesce exec` sends it: verified empty, or with what could not be ended. */
const report = (kind: "empty" | "survivors" | "not_ended" | "never_empty", weakest: boolean): EnvironmentEvidence => ({
  kind: "environment",
  mechanism: weakest ? "pgroup" : "cgroup2",
  weakest,
  container: "/sys/fs/cgroup/quiesce/x",
  graceMs: 0,
  stopStartedAt: at(10).toISOString(),
  emptyAt: kind === "never_empty" ? null : at(400).toISOString(),
  processes: [
    { pid: 10, cmdline: "claude -p", firstSeenAt: at(1).toISOString(), endedAt: at(300).toISOString(), ended: "after_sigterm" },
    {
      pid: 11,
      cmdline: "sleep 600",
      firstSeenAt: at(2).toISOString(),
      endedAt: kind === "not_ended" ? null : at(350).toISOString(),
      ended: kind === "not_ended" ? "not_ended" : "after_sigkill",
    },
  ],
  survivors: kind === "survivors" ? [11] : [],
  reattached: false,
});

const op: fc.Arbitrary<OperationFact> = fc
  .record({
    state: fc.constantFrom<OperationState>(...OPERATION_STATES),
    hasProvider: fc.boolean(),
    settled: fc.constantFrom(null, "cancelled_without_effect", "completed_and_verified", "unknown", "pending"),
    rec: fc.constantFrom(null, "awaiting_assignee", "assigned", "resolved"),
    owner: fc.boolean(),
    idx: fc.nat(1000),
    run: fc.nat(4),
    settledAt: optDate,
  })
  .map((x): OperationFact => {
    // Keep the facts as the database would hold them: unknown ⇔ an open reconciliation (the trigger),
    // a resolved reconciliation ⇒ a terminal known state.
    const state: OperationState = x.rec === "resolved" && (x.state === "aborted_unknown" || x.state === "running") ? "failed" : x.state;
    const rec =
      state === "aborted_unknown"
        ? x.rec === null || x.rec === "resolved"
          ? "assigned"
          : x.rec
        : x.rec === "resolved"
          ? "resolved"
          : null;
    return {
      operationId: `op-${x.idx}`,
      runId: `run_${x.run}`,
      tool: "t",
      kind: "call",
      state,
      providerName: x.hasProvider ? "p" : null,
      hasProvider: x.hasProvider,
      providerJob: null,
      finishedAt: x.settledAt,
      settlement:
        x.settled === null
          ? null
          : {
              barrierId: "stop_x",
              stateAtBarrier: "running",
              cancelRequestedAt: at(0),
              providerResponse: x.hasProvider ? "accepted" : null,
              effectExpected: "absence",
              effectObserved: x.settled === "completed_and_verified" && x.hasProvider ? "present" : null,
              effectCheckedAt: null,
              settledState: x.settled === "pending" ? null : x.settled,
              settledAt: x.settled === "pending" ? null : x.settledAt,
              settledReason: x.settled === "completed_and_verified" ? "effect present (provider)" : null,
              attempts: 1,
              lastError: null,
            },
      reconciliation:
        rec === null
          ? null
          : {
              id: `rec-${x.idx}`,
              status: rec,
              assignee: x.owner ? "owner@x.test" : null,
              assignedBy: "system:default-owner (team admin)",
              assignedAt: at(1),
              resolution: rec === "resolved" ? "effect_absent" : null,
              evidence: rec === "resolved" ? "looked" : null,
              resolvedAt: rec === "resolved" ? at(2000) : null,
              resolvedBy: rec === "resolved" ? "alice@x.test" : null,
              cause: "cancel_unacknowledged",
            },
    };
  });

const facts: fc.Arbitrary<EvidenceFacts> = fc
  .record({
    runs: fc.array(
      fc.record({
        lifecycle: fc.constantFrom("normal" as const, "paused" as const, "killed" as const, "killed" as const),
        ack: fc.option(fc.constantFrom("signal_accepted", "turn_interrupted", "process_terminated"), { nil: null }),
        env: fc.option(
          fc.record({
            report: fc.constantFrom(null, "empty", "empty", "survivors", "not_ended", "never_empty"),
            weakest: fc.boolean(),
            owner: fc.boolean(),
            resolved: fc.boolean(),
          }),
          { nil: null },
        ),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    ops: fc.uniqueArray(op, { maxLength: 8, selector: (o) => o.operationId }),
    enginePhase: fc.constantFrom("revoking" as const, "settling" as const, "quiet" as const, "complete" as const),
    dispatch: fc.boolean(),
    queued: fc.boolean(),
    active: fc.nat(2),
    quietUntil: optDate,
    now: fc.integer({ min: 0, max: 60_000 }).map(at),
    receipts: fc.nat(2),
    late: fc.nat(3),
  })
  .map((x): EvidenceFacts => ({
    now: x.now,
    barrier: {
      ...BARRIER,
      reason: "wrong commit",
      enginePhase: x.enginePhase,
      dispatchStoppedAt: x.dispatch ? at(5) : null,
      queuedCancelledAt: x.queued ? at(5) : null,
      quietUntil: x.quietUntil,
    },
    runs: x.runs.map((r, i) => ({
      id: `run_${i}`,
      lifecycle: r.lifecycle,
      acknowledgment: r.ack ? { meaning: r.ack, at: at(100 + i) } : null,
      environment: r.env
        ? {
            mechanism: r.env.weakest ? "pgroup" : "cgroup2",
            weakest: r.env.weakest,
            supervisedAt: at(0),
            evidence: r.env.report ? report(r.env.report, r.env.weakest) : null,
            evidenceAt: r.env.report ? at(500) : null,
            unknownSince: r.env.owner ? at(5000) : null,
            owner: r.env.owner ? "owner@x.test" : null,
            // A person's check exists only for an environment that was unknown (and so owned).
            resolvedBy: r.env.owner && r.env.resolved ? "alice@x.test" : null,
            resolvedAt: r.env.owner && r.env.resolved ? at(6000) : null,
            resolutionEvidence: r.env.owner && r.env.resolved ? "ps shows nothing of it" : null,
          }
        : null,
    })),
    leases: { rootLease: "revoked", descendantLeasesRevoked: 0, active: x.active },
    currentEpoch: 2,
    operations: x.ops,
    effectReceipts: [],
    lateRequestsDenied: x.late,
    receipts: Array.from({ length: x.receipts }, (_, i) => ({
      version: i + 1,
      decision: "stop_incomplete" as const,
      digest: "a".repeat(64),
      verifiedAt: at(50_000 + i),
    })),
  }));

describe("evidence model", () => {
  test("I1: stopped_and_quiet only when every operation is terminal and known, nothing is open, no lease is active and the quiet period is over", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const ev = deriveEvidence(f);
        expect(ev.decision === "stopped_and_quiet").toBe(i1Violation(f) === null);
      }),
      { numRuns: 500 },
    );
  });

  test("I5: every rung is done exactly when its fact holds", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const want = rungFacts(f);
        for (const r of deriveEvidence(f).ladder) expect([r.id, r.status === "done"]).toEqual([r.id, want[r.id]]);
      }),
      { numRuns: 500 },
    );
  });

  test("sentences claim only what the facts show", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const ev = deriveEvidence(f);
        const text = [...ev.sentences, ...ev.ladder.map((r) => r.detail)].join("\n");
        if (ev.counts.settledByProvider === 0) expect(text).not.toMatch(/settled by (its|their) provider/);
        if (ev.counts.unknown > 0 || ev.counts.pending > 0) expect(text).not.toMatch(/nothing to roll back/i);
        if (ev.counts.inFlight > 0) expect(text).not.toMatch(/nothing was in flight/);
        expect(text).not.toMatch(/unassigned|answered by its provider/);
        if (ev.counts.reconciledByPerson > 0) expect(text).toMatch(/reconciled by alice@x\.test on /);
        // The environment: nothing claimed without a supervisor, "terminated" only for a container verified empty.
        const supervised = f.runs.filter((r) => r.environment);
        if (supervised.length < f.runs.length) expect(ev.sentences.join("\n")).toMatch(/nothing is claimed about (its|their) processes/);
        for (const r of f.runs.filter((x) => !x.environment)) expect(text).not.toContain(`${r.id}: environment terminated`);
        for (const r of supervised)
          if (!r.environment!.evidence || r.environment!.evidence.survivors.length || !r.environment!.evidence.emptyAt)
            expect(text).not.toContain(`${r.id}: environment terminated`);
        if (supervised.length === 0) expect(ev.ladder.some((r) => r.id === "environment_terminated")).toBe(false);
        if (ev.decision === "stopped_and_quiet") expect(ev.sentences.at(-1)).toMatch(/^Stopped and quiet/);
        else expect(ev.sentences.at(-1)).toMatch(/^Not yet quiet/);
        // A receipt that says stopped and quiet has no rung beside it saying the stop did not happen.
        if (ev.phase === "complete" && ev.decision === "stopped_and_quiet")
          for (const r of ev.ladder)
            expect(r.detail, r.id).not.toMatch(/requested is not stopped|a requested stop is not proof|incomplete/);
      }),
      { numRuns: 300 },
    );
  });

  test("the receipt: counts from the model, one verifier, JSON and YAML from the same object", () => {
    fc.assert(
      fc.property(facts, fc.nat(3), (f, v) => {
        const verifiedAt = at(60_001);
        const { body, canonical, digest, decision, evidence } = buildReceipt(f, {
          version: v + 1,
          previousDigest: v ? "b".repeat(64) : null,
          verifiedAt,
        });
        expect(decision).toBe(deriveEvidence({ ...f, now: verifiedAt }).decision);
        expect(body.effects.unknown).toBe(evidence.counts.unknown);
        expect(body.work.in_flight_pending).toBe(evidence.counts.pending);
        // The environment section claims no more than each run's supervisor reported.
        expect(body.environment.map((e) => e.run_id)).toEqual(f.runs.map((r) => r.id));
        for (const [i, e] of body.environment.entries()) {
          const r = f.runs[i]!;
          if (!r.environment) expect(e).toEqual({ run_id: r.id, supervised: false, statement: UNSUPERVISED_SENTENCE });
          else if ("status" in e && e.status === "verified_by_person") {
            expect(e.resolved_by).toBe("alice@x.test");
            expect(e.statement).toMatch(/a person's check/);
          } else if ("status" in e && e.status === "terminated") {
            expect(r.environment.evidence?.emptyAt).toBeTruthy();
            expect(e.could_not_kill).toEqual([]);
            expect(e.processes.every((p) => p.ended !== "not_ended")).toBe(true);
          }
        }
        expect(verifyReceipt({ body, canonical, digest }).ok).toBe(true);
        expect(verifyReceipt({ body: JSON.parse(JSON.stringify(body)) }).ok).toBe(true);
        expect(
          verifyReceipt({ body: { ...body, decision: decision === "stopped_and_quiet" ? "stop_incomplete" : "stopped_and_quiet" } }).ok,
        ).toBe(false);
        expect(verifyReceipt({ body: { ...body, summary: [...body.summary, "extra"] } }).ok).toBe(false);
        expect(parse(serializeReceipt(body, "yaml")).stop_receipt).toEqual(JSON.parse(serializeReceipt(body, "json")));
        expect(canonicalJson(inReadingOrder(body))).toBe(canonicalJson(body));
      }),
      { numRuns: 200 },
    );
  });
});

describe("who settled what, in words", () => {
  const base = (over: Partial<OperationFact>): OperationFact => ({
    operationId: "op-a",
    runId: "run_0",
    tool: "deploy",
    kind: "call",
    state: "failed",
    providerName: "deploy-sim",
    hasProvider: true,
    providerJob: "j1",
    finishedAt: at(3000),
    settlement: {
      barrierId: "stop_x",
      stateAtBarrier: "running",
      cancelRequestedAt: at(10),
      providerResponse: "accepted",
      effectExpected: "absence",
      effectObserved: "absent",
      effectCheckedAt: at(900),
      settledState: "cancelled_without_effect",
      settledAt: at(1000),
      settledReason: "provider stopped; effect proven absent",
      attempts: 2,
      lastError: null,
    },
    reconciliation: null,
    ...over,
  });
  /** `base` with its settlement changed where `s` says. */
  const settledAs = (s: Partial<NonNullable<OperationFact["settlement"]>>, over: Partial<OperationFact>) =>
    base({ ...over, settlement: { ...base({}).settlement!, ...s } });
  const facts = (ops: OperationFact[]): EvidenceFacts => ({
    now: at(60_000),
    barrier: { ...BARRIER, reason: "r", enginePhase: "complete", dispatchStoppedAt: at(1), queuedCancelledAt: at(1), quietUntil: at(5000) },
    runs: [{ id: "run_0", lifecycle: "killed", acknowledgment: null }],
    leases: { rootLease: "revoked", descendantLeasesRevoked: 0, active: 0 },
    currentEpoch: 2,
    operations: ops,
    effectReceipts: [],
    lateRequestsDenied: 0,
    receipts: [],
  });

  test("'1 settled by its provider, 1 reconciled by … on …' — the person's settlement is never credited to a provider", () => {
    const person = settledAs(
      { providerResponse: "unreachable", effectObserved: "unavailable", settledReason: "reconciled by user:u2: effect_absent" },
      {
        operationId: "op-b",
        state: "failed",
        reconciliation: {
          id: "rec-b",
          status: "resolved",
          assignee: "bob@x.test",
          assignedBy: "system:default-owner (asked for the stop)",
          assignedAt: at(2000),
          resolution: "effect_absent",
          evidence: "deploy console shows nothing",
          resolvedAt: new Date(Date.UTC(2026, 10, 30, 23, 50)),
          resolvedBy: "bob@x.test",
          cause: "target_unreachable",
        },
      },
    );
    const ev = deriveEvidence(facts([base({}), person]));
    expect(ev.sentences[2]).toBe(
      "2 calls in flight across the subtree; 1 settled by its provider, 1 reconciled by bob@x.test on 2026-11-30 23:50 UTC (effect absent).",
    );
    expect(ev.operations.map((o) => o.settledBy)).toEqual(["provider", "person"]);
    expect(ev.decision).toBe("stopped_and_quiet");
  });

  test("no provider, or one that never answered a check, never 'settled' anything", () => {
    const none = settledAs(
      {
        providerResponse: null,
        effectObserved: null,
        settledState: "completed_and_verified",
        settledReason: "late effect reported by key:k",
      },
      { providerName: null, hasProvider: false, state: "succeeded" },
    );
    const silent = settledAs(
      { effectObserved: "unavailable", settledState: "completed_and_verified", settledReason: "effect present (executor)" },
      { operationId: "op-c", state: "succeeded" },
    );
    const ev = deriveEvidence(facts([none, silent]));
    expect(ev.counts.settledByProvider).toBe(0);
    expect(ev.sentences.join(" ")).toContain("2 reported by their executors");
  });
});
