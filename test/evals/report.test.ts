// The eval / drill report: the table names every case with expected, observed and pass, prints why a
// case failed, and the summary is not ok while anything failed or errored (skips do not fail a run).
import { describe, expect, test } from "vitest";
import { buildReport, renderTable, reportFileName, summarize } from "../../lib/drill/report";
import type { CaseResult } from "../../lib/drill/types";

const result = (over: Partial<CaseResult>): CaseResult => ({
  name: "queued_call_starts_after_parent_revocation",
  seed: "001",
  expected: "deny_parent_revoked",
  observed: "deny_parent_revoked",
  status: "pass",
  checks: [],
  evidence: [],
  facts: {},
  durationMs: 10,
  ...over,
});

describe("report", () => {
  test("the table has one row per case with expected, observed and pass", () => {
    const t = renderTable([
      result({}),
      result({
        name: "provider_status_unavailable",
        expected: "stop_incomplete_unknown_outcome",
        observed: "stopped_and_quiet_cancelled_without_effect",
        status: "fail",
        checks: [
          { name: "the settlement is unknown, not cancelled", ok: false, detail: "cancelled_without_effect" },
          { name: "the provider accepted the cancel", ok: true },
        ],
      }),
    ]);
    const lines = t.split("\n");
    expect(lines[0]).toMatch(/^case\s+expected\s+observed\s+pass$/);
    expect(t).toMatch(/queued_call_starts_after_parent_revocation\s+deny_parent_revoked\s+deny_parent_revoked\s+PASS/);
    expect(t).toMatch(/provider_status_unavailable\s+stop_incomplete_unknown_outcome\s+stopped_and_quiet_cancelled_without_effect\s+FAIL/);
    // Only the failing check is listed, with what was seen.
    expect(t).toContain("✗ the settlement is unknown, not cancelled: cancelled_without_effect");
    expect(t).not.toContain("the provider accepted the cancel");
    expect(t).toContain('✗ observed "stopped_and_quiet_cancelled_without_effect", expected "stop_incomplete_unknown_outcome"');
    expect(lines.at(-1)).toBe("1 passed, 1 failed, 0 errors, 0 skipped (2 cases)");
  });

  test("errors and skips carry their note; only failures and errors make the run not ok", () => {
    const skipped = result({
      name: "provider_commits_during_cancel_request",
      status: "skip",
      observed: "-",
      note: "needs the simulated provider (--sim-url)",
    });
    expect(summarize([result({}), skipped])).toMatchObject({ ok: true, passed: 1, skipped: 1 });
    const errored = result({ status: "error", observed: "error", note: "Error: timed out waiting for the stop receipt" });
    expect(summarize([result({}), errored]).ok).toBe(false);
    const t = renderTable([skipped, errored]);
    expect(t).toContain("needs the simulated provider (--sim-url)");
    expect(t).toContain("timed out waiting for the stop receipt");
  });

  test("the JSON report carries times, environment, summary and the cases; the file name is filesystem-safe", () => {
    const at = new Date("2026-11-29T09:31:08.201Z");
    const r = buildReport("evals", at, new Date(at.getTime() + 5000), { webApp: { kind: "next start" } }, [result({})]);
    expect(r).toMatchObject({
      kind: "evals",
      durationMs: 5000,
      environment: { webApp: { kind: "next start" } },
      summary: { total: 1, passed: 1, ok: true },
    });
    expect(JSON.parse(JSON.stringify(r)).cases[0].name).toBe("queued_call_starts_after_parent_revocation");
    expect(reportFileName(at)).toBe("2026-11-29T09-31-08-201Z.json");
  });
});
