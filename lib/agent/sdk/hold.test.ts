import { expect, test } from "vitest";
import fc from "fast-check";
import { askGate, backoffDelay, type GateAnswer } from "./hold";

const scripted = (answers: GateAnswer[]) => {
  let i = 0;
  return async () => answers[Math.min(i++, answers.length - 1)]!;
};
const hold: GateAnswer = { decision: "hold", reason: "paused" };

test("backoff never shrinks and never passes its cap", () => {
  fc.assert(
    fc.property(fc.nat(1000), fc.integer({ min: 1, max: 60_000 }), (a, cap) => {
      expect(backoffDelay(a + 1, cap)).toBeGreaterThanOrEqual(backoffDelay(a, cap));
      expect(backoffDelay(a, cap)).toBeLessThanOrEqual(cap);
    }),
  );
});

test("holds re-ask until a decision; every hold is reported", async () => {
  const holds: number[] = [];
  const r = await askGate(scripted([hold, hold, { decision: "allow", reason: "allowed" }]), {
    backoff: () => 1,
    onHold: (_a, n) => holds.push(n),
  });
  expect(r).toMatchObject({ kind: "decided", answer: { decision: "allow" } });
  expect(holds).toEqual([0, 1]);
  expect(await askGate(scripted([{ decision: "deny", reason: "killed" }]))).toMatchObject({
    kind: "decided",
    answer: { reason: "killed" },
  });
});

test("a maximum hold gives up with the last answer; the caller's signal cancels; a wake-up ends a wait at once", async () => {
  expect(await askGate(scripted([hold]), { maxHoldMs: 30, backoff: () => 10 })).toMatchObject({ kind: "held_too_long", answer: hold });
  const ctrl = new AbortController();
  const cancelled = askGate(scripted([hold]), { signal: ctrl.signal, backoff: () => 3_600_000 });
  setTimeout(() => ctrl.abort(), 20);
  expect(await cancelled).toMatchObject({ kind: "cancelled", answer: hold });
  // The bell rings while the gate is being asked: the following (hour-long) wait ends immediately.
  let bell = new AbortController();
  let n = 0;
  const t0 = Date.now();
  const r = await askGate(
    async () => {
      if (n++ === 0) {
        const old = bell;
        bell = new AbortController();
        old.abort();
        return hold;
      }
      return { decision: "allow", reason: "allowed" };
    },
    { wake: () => bell.signal, backoff: () => 3_600_000 },
  );
  expect(r.kind).toBe("decided");
  expect(Date.now() - t0).toBeLessThan(5_000);
});

const awaiting = (approvalId: string): GateAnswer => ({ decision: "hold", reason: "awaiting_approval", approvalId });

test("an approval wait names each approval once as it starts, asks again at once, then re-asks only when woken or rechecking", async () => {
  const named: string[] = [];
  let asks = 0;
  const answers: GateAnswer[] = [
    awaiting("apr_1"),
    awaiting("apr_1"),
    hold,
    awaiting("apr_2"),
    awaiting("apr_2"),
    { decision: "allow", reason: "allowed" },
  ];
  const r = await askGate(async () => answers[Math.min(asks++, answers.length - 1)]!, {
    approvalRecheckMs: 5,
    backoff: () => 1,
    onApproval: (id) => void named.push(id),
  });
  expect(r).toMatchObject({ kind: "decided", answer: { decision: "allow" } });
  expect(named).toEqual(["apr_1", "apr_2"]);
  expect(asks).toBe(6);
  // No recheck and no wake-up: after naming the approval the loop waits (here: until the caller cancels).
  const ctrl = new AbortController();
  let n = 0;
  const waiting = askGate(
    async () => {
      n++;
      return awaiting("apr_3");
    },
    { signal: ctrl.signal, approvalRecheckMs: 3_600_000 },
  );
  setTimeout(() => ctrl.abort(), 50);
  expect(await waiting).toMatchObject({ kind: "cancelled", answer: { approvalId: "apr_3" } });
  expect(n).toBe(2);
});

test("a pause and an approval wait have their own limits, each counted from when it began", async () => {
  // The hook: a pause is not waited for at all, an approval is.
  expect(await askGate(scripted([hold]), { maxHoldMs: 0, maxApprovalWaitMs: 10_000 })).toMatchObject({
    kind: "held_too_long",
    answer: hold,
  });
  const t0 = Date.now();
  const r = await askGate(scripted([awaiting("apr_1")]), { maxHoldMs: 0, maxApprovalWaitMs: 40, approvalRecheckMs: 10 });
  expect(r).toMatchObject({ kind: "held_too_long", answer: { reason: "awaiting_approval" } });
  expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
  // Without an approval limit, the hold limit applies to both.
  expect(await askGate(scripted([awaiting("apr_1")]), { maxHoldMs: 20, approvalRecheckMs: 5 })).toMatchObject({ kind: "held_too_long" });
});
