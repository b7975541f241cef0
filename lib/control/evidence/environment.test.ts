// The environment rung's rules (docs/evidence.md#the-environment), as properties over generated subtrees.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  asEnvironmentEvidence,
  deriveEnvironment,
  environmentMeaning,
  UNSUPERVISED_SENTENCE,
  type EnvironmentEvidence,
  type RunEnvironmentFact,
} from "./environment";

const when = (d: Date) => d.toISOString();

function ev(over: Partial<EnvironmentEvidence> = {}): EnvironmentEvidence {
  return {
    kind: "environment",
    mechanism: "cgroup2",
    weakest: false,
    container: "c",
    graceMs: 0,
    stopStartedAt: "2026-12-06T10:00:00.000Z",
    emptyAt: "2026-12-06T10:00:01.000Z",
    processes: [
      {
        pid: 1,
        cmdline: "sleep 600",
        firstSeenAt: "2026-12-06T09:00:00.000Z",
        endedAt: "2026-12-06T10:00:00.500Z",
        ended: "after_sigterm",
      },
    ],
    survivors: [],
    reattached: false,
    ...over,
  };
}

const fact = fc.record({
  runId: fc.string({ minLength: 1, maxLength: 6 }).map((s) => `run_${s}`),
  supervised: fc.boolean(),
  evidence: fc.option(
    fc
      .record({ empty: fc.boolean(), survivors: fc.array(fc.integer({ min: 2, max: 99999 }), { maxLength: 3 }) })
      .map(({ empty, survivors }) => ev({ emptyAt: empty ? "2026-12-06T10:00:01.000Z" : null, survivors })),
    { nil: null },
  ),
}) as fc.Arbitrary<RunEnvironmentFact>;

describe("environment evidence", () => {
  it("process_terminated only for a container verified empty with no survivor", () => {
    expect(environmentMeaning(ev())).toBe("process_terminated");
    expect(environmentMeaning(ev({ emptyAt: null }))).toBe("unknown");
    expect(environmentMeaning(ev({ survivors: [42] }))).toBe("unknown");
    expect(environmentMeaning(ev({ processes: [{ ...ev().processes[0]!, ended: "not_ended", endedAt: null }] }))).toBe("unknown");
  });

  it("reads only what is an environment report", () => {
    expect(asEnvironmentEvidence(ev())).not.toBeNull();
    expect(asEnvironmentEvidence({ kind: "environment", mechanism: "magic" })).toBeNull();
    expect(asEnvironmentEvidence(null)).toBeNull();
  });

  it("quiet is allowed exactly when every supervised run has a verified-empty environment", () => {
    fc.assert(
      fc.property(fc.array(fact, { maxLength: 6 }), fc.boolean(), (runs, quietOver) => {
        const v = deriveEnvironment(runs, quietOver, when);
        const sup = runs.filter((r) => r.supervised);
        const allEmpty = sup.every((r) => r.evidence && environmentMeaning(r.evidence) === "process_terminated");
        expect(v.allowsQuiet).toBe(allEmpty);
        // A supervised run without a report after the quiet period is unknown, with a reconciliation.
        for (const r of sup) if (!r.evidence && quietOver) expect(v.unknownRuns.map((u) => u.runId)).toContain(r.runId);
        // Every unsupervised run says, in words, that nothing is claimed about its processes.
        for (const r of runs.filter((x) => !x.supervised)) expect(v.sentences).toContain(`${r.runId}: ${UNSUPERVISED_SENTENCE}`);
        if (sup.length === 0) expect(v.status).toBe("not_observed");
      }),
    );
  });

  it("says how many processes ended and when the container was empty", () => {
    const v = deriveEnvironment([{ runId: "run_a", supervised: true, evidence: ev() }], true, when);
    expect(v.status).toBe("done");
    expect(v.sentences[0]).toBe("run_a: environment terminated: 1 process ended, container (cgroup2) empty at 2026-12-06T10:00:01.000Z");
    const weak = deriveEnvironment(
      [{ runId: "run_b", supervised: true, evidence: ev({ mechanism: "pgroup", weakest: true }) }],
      true,
      when,
    );
    expect(weak.sentences[0]).toMatch(/weakest/);
  });
});
