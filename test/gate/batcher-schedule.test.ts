// The gate batcher's scheduling (lib/modules/gate/statement.ts GateBatcher), with deciders the test answers by hand:
// when a statement goes, and with which calls. What the statements decide is the database's part, tested
// against it in batch.test.ts, oracle.test.ts and race.test.ts; here only the order of sending matters.
import { expect, test } from "vitest";
import { GateBatcher, type GateArgs, type GateDeciders, type RawAnswer } from "../../lib/modules/gate/statement";

const ALLOW: RawAnswer = { ok: true, decision: "allow", reason: "allowed", currentEpoch: 1, continue: true };
const call = (id: string): GateArgs => ({ keyHash: "0".repeat(64), runId: "run", leaseId: "lease", epoch: 1, operationId: id, tool: "t" });

/** Every statement the batcher sent, in order, each answerable by the test. */
function deciders() {
  const sent: { ids: string[]; answer: () => void }[] = [];
  const d: GateDeciders = {
    one: (a) => new Promise((resolve) => sent.push({ ids: [a.operationId], answer: () => resolve(ALLOW) })),
    many: (b) => new Promise((resolve) => sent.push({ ids: b.map((a) => a.operationId), answer: () => resolve(b.map(() => ALLOW)) })),
  };
  return { d, sent };
}

const turn = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two statements may be in flight; brings the batcher to: one batch of 3 (c, d, e) in flight, a slot free. */
async function batchOfThreeInFlight(holdMs: number) {
  const { d, sent } = deciders();
  const b = new GateBatcher(2, 64, 5_000, holdMs, d);
  const answered: string[] = [];
  const ask = (id: string) => void b.ask(call(id)).then(() => answered.push(id));
  ask("a"); // nothing in flight: alone, at once
  ask("b"); // as many wait (1) as the batch in flight carries (1): the second slot, at once
  ask("c");
  ask("d");
  ask("e"); // both slots busy: c, d, e wait
  expect(sent.map((s) => s.ids)).toEqual([["a"], ["b"]]);
  sent[0]!.answer();
  await turn();
  await turn(); // the slot is freed on the next turn of the event loop
  expect(sent.map((s) => s.ids)).toEqual([["a"], ["b"], ["c", "d", "e"]]);
  sent[1]!.answer();
  await turn();
  await turn();
  expect(answered).toEqual(["a", "b"]);
  return { b, sent, ask, answered };
}

test("with a batch in flight and a slot free, fewer waiting calls than it carries are held; as many go at once", async () => {
  const { sent, ask } = await batchOfThreeInFlight(60_000);
  ask("f");
  ask("g");
  await turn();
  expect(sent).toHaveLength(3); // f and g are held: 2 < 3
  ask("h"); // 3 wait, as many as the batch in flight carries
  expect(sent.map((s) => s.ids).at(-1)).toEqual(["f", "g", "h"]);
});

test("held calls go when the batch in flight returns, all together", async () => {
  const { sent, ask, answered } = await batchOfThreeInFlight(60_000);
  ask("f");
  ask("g");
  sent[2]!.answer();
  await turn();
  await turn();
  expect(sent.map((s) => s.ids).at(-1)).toEqual(["f", "g"]);
  expect(answered).toEqual(["a", "b", "c", "d", "e"]);
});

test("a statement that never returns holds the waiting calls back no longer than QUIESCE_GATE_BATCH_HOLD_MS", async () => {
  const { sent, ask } = await batchOfThreeInFlight(40);
  ask("f");
  await sleep(5);
  expect(sent).toHaveLength(3);
  await sleep(80);
  expect(sent.map((s) => s.ids).at(-1)).toEqual(["f"]); // the batch of 3 is still unanswered
});

test("QUIESCE_GATE_BATCH_HOLD_MS=0 sends a waiting call at once whenever a slot is free", async () => {
  const { sent, ask } = await batchOfThreeInFlight(0);
  ask("f");
  expect(sent.map((s) => s.ids).at(-1)).toEqual(["f"]);
});
