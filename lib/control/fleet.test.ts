import { describe, expect, test } from "vitest";
import fc from "fast-check";
import {
  barrierTargets,
  buildFleetReceipt,
  fleetDecision,
  isWholeTeam,
  RUN_STATUSES,
  runControl,
  runStatus,
  scopeAuthority,
  scopeMatches,
  STOP_ACTIONS,
  type ScopeRunFacts,
  type StopFilter,
} from "./fleet";
import { canonicalJson, sha256Hex } from "./canonical";
import { HARNESSES, LIFECYCLES } from "./types";

const runArb: fc.Arbitrary<ScopeRunFacts> = fc.record({
  runId: fc.constantFrom("r1", "r2", "r3"),
  harness: fc.constantFrom(...HARNESSES),
  nativeAgentId: fc.constantFrom(null, "a1", "a2"),
  createdBy: fc.constantFrom(null, "key_1"),
  taskId: fc.constantFrom("deploy-1", "deploy-2", "index-1"),
  createdAt: fc.integer({ min: 0, max: 100 }),
  lifecycle: fc.constantFrom(...LIFECYCLES),
  finishedAt: fc.constantFrom(null, 50),
});
const filterArb: fc.Arbitrary<StopFilter> = fc.record(
  {
    harness: fc.subarray([...HARNESSES], { minLength: 1 }),
    agent: fc.subarray(["a1", "a2", "key_1"], { minLength: 1 }),
    taskPrefix: fc.constantFrom("deploy-", "index", ""),
    createdAfter: fc.integer({ min: 0, max: 100 }),
    createdBefore: fc.integer({ min: 0, max: 100 }),
    status: fc.subarray([...RUN_STATUSES], { minLength: 1 }),
    runIds: fc.subarray(["r1", "r2", "r3"], { minLength: 1 }),
  },
  { requiredKeys: [] },
);

describe("scopeMatches", () => {
  test("the empty filter is the whole team: it matches every run", () => {
    fc.assert(
      fc.property(runArb, (r) => {
        expect(isWholeTeam({})).toBe(true);
        expect(scopeMatches({}, r)).toBe(true);
      }),
    );
  });
  test("a filter matches exactly when every member it sets matches (members narrow, never widen)", () => {
    fc.assert(
      fc.property(filterArb, runArb, (f, r) => {
        const parts = (Object.keys(f) as (keyof StopFilter)[]).map((k) => scopeMatches({ [k]: f[k] } as StopFilter, r));
        expect(scopeMatches(f, r)).toBe(parts.every(Boolean));
      }),
    );
  });
  test("created after is inclusive, created before exclusive", () => {
    const r = {
      runId: "r",
      harness: "mcp",
      nativeAgentId: null,
      createdBy: null,
      taskId: "t",
      createdAt: 10,
      lifecycle: "normal",
      finishedAt: null,
    } as const;
    expect(scopeMatches({ createdAfter: 10 }, r)).toBe(true);
    expect(scopeMatches({ createdBefore: 10 }, r)).toBe(false);
  });
  test("status: killed beats finished beats paused beats active", () => {
    expect(runStatus({ lifecycle: "killed", finishedAt: 1 })).toBe("killed");
    expect(runStatus({ lifecycle: "paused", finishedAt: 1 })).toBe("finished");
    expect(runStatus({ lifecycle: "paused", finishedAt: null })).toBe("paused");
    expect(runStatus({ lifecycle: "normal", finishedAt: null })).toBe("active");
  });
});

describe("scopeAuthority", () => {
  test("a scope applies when the run or any ancestor matches; kill outranks pause; no match → null", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ action: fc.constantFrom(...STOP_ACTIONS), filter: filterArb })),
        fc.array(runArb, { minLength: 1, maxLength: 3 }),
        (scopes, chain) => {
          const hits = scopes.filter((s) => chain.some((r) => scopeMatches(s.filter, r)));
          const want = hits.some((s) => s.action === "kill") ? "kill" : hits.length > 0 ? "pause" : null;
          expect(scopeAuthority(scopes, chain)).toBe(want);
        },
      ),
    );
  });
});

describe("runControl", () => {
  test("killed by a kill of the chain or an applying kill scope, else paused by either; stopIds are the scopes behind it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ action: fc.constantFrom(...STOP_ACTIONS), filter: filterArb })),
        fc.array(runArb, { minLength: 1, maxLength: 3 }),
        (raw, chain) => {
          const scopes = raw.map((s, i) => ({ ...s, id: `scope_${i}` }));
          const got = runControl(scopes, chain);
          const scoped = scopeAuthority(scopes, chain);
          const killed = chain.some((r) => r.lifecycle === "killed") || scoped === "kill";
          const paused = chain.some((r) => r.lifecycle === "paused") || scoped === "pause";
          expect(got.control).toBe(killed ? "killed" : paused ? "paused" : "normal");
          const want = got.control === "normal" ? [] : scopes.filter((s) => s.action === (got.control === "killed" ? "kill" : "pause"));
          expect(got.stopIds).toEqual(want.filter((s) => chain.some((r) => scopeMatches(s.filter, r))).map((s) => s.id));
          expect(got.lifecycle === "killed").toBe(chain.some((r) => r.lifecycle === "killed"));
        },
      ),
    );
  });
});

describe("barrierTargets", () => {
  test("every matched run is a target or under one, and no target is under another", () => {
    const treeArb = fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 12 }).map((parents) => {
      const paths: string[][] = [];
      parents.forEach((p, i) => {
        const parent = i === 0 || p >= i ? null : paths[p]!;
        paths.push([...(parent ?? []), `r${i}`]);
      });
      return paths;
    });
    fc.assert(
      fc.property(treeArb, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (paths, pick) => {
        const matched = paths.filter((_, i) => pick[i]).map((path) => ({ runId: path.at(-1)!, path }));
        const targets = new Set(barrierTargets(matched));
        for (const m of matched) expect(m.path.some((a) => targets.has(a))).toBe(true);
        for (const m of matched) if (targets.has(m.runId)) expect(m.path.slice(0, -1).some((a) => targets.has(a))).toBe(false);
      }),
    );
  });
});

describe("fleet receipt", () => {
  const runArbR = fc.record({
    runId: fc.string({ minLength: 1, maxLength: 4 }),
    barrierId: fc.string({ minLength: 1 }),
    decision: fc.constantFrom("stopped_and_quiet" as const, "stop_incomplete" as const),
    digest: fc.stringMatching(/^[0-9a-f]{4,8}$/),
    link: fc.constant("/x"),
  });
  test("stopped_and_quiet only when every run's receipt is; the digest is sha256 over the canonical body without it; order-independent", () => {
    fc.assert(
      fc.property(fc.array(runArbR, { maxLength: 6 }), (runs) => {
        const input = {
          scopeId: "scope_1",
          teamId: "team_1",
          action: "kill" as const,
          filter: { taskPrefix: "deploy-" },
          reason: "incident",
          requestedBy: "user:u",
          committedAt: 0,
          issuedAt: 1000,
          matched: runs.length,
          runs,
        };
        const r = buildFleetReceipt(input);
        expect(r.decision).toBe(runs.every((x) => x.decision === "stopped_and_quiet") ? "stopped_and_quiet" : "stop_incomplete");
        expect(fleetDecision(runs)).toBe(r.decision);
        const { digest, ...rest } = r.body;
        expect(digest).toBe(sha256Hex(canonicalJson(rest)));
        expect(r.canonical).toBe(canonicalJson(rest));
        expect(buildFleetReceipt({ ...input, runs: [...runs].reverse() }).digest).toBe(r.digest);
      }),
    );
  });
});
