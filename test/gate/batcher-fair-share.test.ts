// Fair share between teams in the gate batcher (lib/modules/gate/fair-share.ts, docs/gate.md#fair-share), with
// deciders the test answers by hand as in batcher-schedule.test.ts: which calls each statement carries
// when several teams wait. The team of a call is its key hash here (one key per team).
import { expect, test } from "vitest";
import { GateBatcher, type GateArgs, type GateDeciders, type RawAnswer } from "../../lib/modules/gate/statement";
import { teamOfKeyHash } from "../../lib/modules/gate/fair-share";
import { makeKey, makeTeam } from "../support/fixtures";

const ALLOW: RawAnswer = { ok: true, decision: "allow", reason: "allowed", currentEpoch: 1, continue: true };
/** A call of team `id[0]` ("a1" is team a's first call). */
const call = (id: string): GateArgs => ({ keyHash: id[0]!, runId: "run", leaseId: "lease", epoch: 1, operationId: id, tool: "t" });
const byTeam = { teamOf: (a: GateArgs) => `team:${a.keyHash}`, teamCap: 0 };

function deciders() {
  const sent: { ids: string[]; answer: () => void }[] = [];
  const d: GateDeciders = {
    one: (a) => new Promise((resolve) => sent.push({ ids: [a.operationId], answer: () => resolve(ALLOW) })),
    many: (b) => new Promise((resolve) => sent.push({ ids: b.map((a) => a.operationId), answer: () => resolve(b.map(() => ALLOW)) })),
  };
  return { d, sent, ids: () => sent.map((s) => s.ids) };
}

const turn = () => new Promise((r) => setImmediate(r));
/** Lets an answered statement's slot (and its teams' places) be freed: the batcher frees them a turn later. */
const settle = async () => {
  await turn();
  await turn();
};
const ids = (team: string, n: number, from = 1) => Array.from({ length: n }, (_, i) => `${team}${from + i}`);

test("team b's calls are not queued behind team a's flood: the next batch takes the teams in turn", async () => {
  const { d, sent, ids: got } = deciders();
  const b = new GateBatcher(1, 4, 60_000, 0, d, byTeam);
  for (const id of ["a0", ...ids("a", 10), ...ids("b", 2)]) void b.ask(call(id));
  expect(got()).toEqual([["a0"]]);
  sent[0]!.answer();
  await settle();
  // First come, first served would send a1 … a4 and keep b's calls waiting two more statements.
  expect(got()[1]).toEqual(["a1", "b1", "a2", "b2"]);
  sent[1]!.answer();
  await settle();
  expect(got()[2]).toEqual(["a3", "a4", "a5", "a6"]);
});

test("past its cap in flight a team's calls wait while another team waits, and another team's call takes the next free slot", async () => {
  const { d, sent, ids: got } = deciders();
  const b = new GateBatcher(3, 64, 60_000, 0, d, { ...byTeam, teamCap: 2 });
  for (const id of ids("a", 5)) void b.ask(call(id));
  // Alone, team a is not capped: the cap shares statements, it never leaves a slot idle.
  expect(got()).toEqual([["a1"], ["a2"], ["a3"]]);
  void b.ask(call("b1"));
  expect(got()).toHaveLength(3);
  sent[0]!.answer();
  await settle();
  // Team b's call leads the next statement; once it is taken nobody else waits, so a's go with it.
  expect(got().slice(3)).toEqual([["b1", "a4", "a5"]]);
});

test("when every waiting team is at its cap none is held back: the statement takes them in turn", async () => {
  const { d, sent, ids: got } = deciders();
  const b = new GateBatcher(2, 64, 60_000, 0, d, { ...byTeam, teamCap: 1 });
  void b.ask(call("a1"));
  void b.ask(call("b1"));
  for (const id of ["a2", "a3", "b2", "b3"]) void b.ask(call(id));
  expect(got()).toEqual([["a1"], ["b1"]]);
  // a1 returns. A cap only binds while another team could go instead; here every team is at its cap
  // once it has one call in, so the free slot carries both teams' calls, alternating.
  sent[0]!.answer();
  await settle();
  expect(got().slice(2)).toEqual([["a2", "b2", "a3", "b3"]]);
});

test("with more teams waiting than a batch holds, the next batch starts with the teams the last one did not reach", async () => {
  const { d, sent, ids: got } = deciders();
  const b = new GateBatcher(1, 3, 60_000, 0, d, byTeam);
  void b.ask(call("z0"));
  for (const t of ["a", "b", "c", "d", "e"]) for (const id of ids(t, 2)) void b.ask(call(id));
  for (let i = 0; i < 4; i++) {
    sent[i]!.answer();
    await settle();
  }
  expect(got().slice(1)).toEqual([["a1", "b1", "c1"], ["d1", "e1", "a2"], ["b2", "c2", "d2"], ["e2"]]);
});

test("a call waiting for a free slot is still answered within the gate's budget", async () => {
  const { d, ids: got } = deciders();
  const b = new GateBatcher(2, 64, 30, 0, d, { ...byTeam, teamCap: 1 });
  void b.ask(call("a1")); // never answered
  void b.ask(call("b1")); // never answered
  const held = b.ask(call("a2")).then(
    () => "answered",
    (e: Error) => e.message,
  );
  expect(got()).toEqual([["a1"], ["b1"]]);
  expect(await held).toMatch(/waited \d+ ms for a batch/);
  expect(got()).toEqual([["a1"], ["b1"]]);
});

test("the process's batcher groups a call by its key's team, looked up in the database once the key is first seen", async () => {
  const { teamId } = await makeTeam("fair share");
  const [k1, k2] = [await makeKey(teamId), await makeKey(teamId, { kind: "worker" })];
  const unknown = "f".repeat(64);
  // Until the lookup has answered, a call is grouped by its key alone.
  expect(teamOfKeyHash(k1.hash)).toBe(`key:${k1.hash}`);
  expect(teamOfKeyHash(k2.hash)).toBe(`key:${k2.hash}`);
  expect(teamOfKeyHash(unknown)).toBe(`key:${unknown}`);
  for (let i = 0; i < 200 && (teamOfKeyHash(k1.hash) !== `team:${teamId}` || teamOfKeyHash(k2.hash) !== `team:${teamId}`); i++)
    await new Promise((r) => setTimeout(r, 10));
  expect([teamOfKeyHash(k1.hash), teamOfKeyHash(k2.hash)]).toEqual([`team:${teamId}`, `team:${teamId}`]);
  await new Promise((r) => setTimeout(r, 50));
  expect(teamOfKeyHash(unknown)).toBe(`key:${unknown}`);
});
