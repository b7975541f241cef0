// The table and the JSON report of an eval or drill run (docs/evals.md#report-format). Pure.
import type { CaseResult } from "./types";

export interface RunReport {
  kind: "evals" | "drill";
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Where it ran: base URL, which web app served it, database, processes. */
  environment: Record<string, unknown>;
  summary: { total: number; passed: number; failed: number; errors: number; skipped: number; ok: boolean };
  cases: CaseResult[];
}

export function summarize(cases: CaseResult[]): RunReport["summary"] {
  const n = (s: CaseResult["status"]) => cases.filter((c) => c.status === s).length;
  const failed = n("fail");
  const errors = n("error");
  return { total: cases.length, passed: n("pass"), failed, errors, skipped: n("skip"), ok: failed === 0 && errors === 0 };
}

export function buildReport(
  kind: RunReport["kind"],
  started: Date,
  finished: Date,
  environment: Record<string, unknown>,
  cases: CaseResult[],
): RunReport {
  return {
    kind,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    environment,
    summary: summarize(cases),
    cases,
  };
}

const PASS_TEXT: Record<CaseResult["status"], string> = { pass: "PASS", fail: "FAIL", error: "ERROR", skip: "skip" };

function pad(s: string, w: number): string {
  return s.length >= w ? s : s + " ".repeat(w - s.length);
}

/** case · expected · observed · pass, then the failing checks (or the error / skip note) under their case. */
export function renderTable(cases: CaseResult[]): string {
  const head = ["case", "expected", "observed", "pass"];
  const rows = cases.map((c) => [c.name, c.expected, c.observed, PASS_TEXT[c.status]]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!))).join("  ");
  const out = [line(head), widths.map((w) => "-".repeat(w)).join("  ")];
  cases.forEach((c, i) => {
    out.push(line(rows[i]!));
    if (c.status === "skip" || c.status === "error") out.push(`    ${c.note ?? ""}`);
    if (c.status === "fail") {
      for (const k of c.checks.filter((x) => !x.ok)) out.push(`    ✗ ${k.name}${k.detail === undefined ? "" : `: ${short(k.detail)}`}`);
      if (c.observed !== c.expected) out.push(`    ✗ observed "${c.observed}", expected "${c.expected}"`);
    }
  });
  const s = summarize(cases);
  out.push("", `${s.passed} passed, ${s.failed} failed, ${s.errors} errors, ${s.skipped} skipped (${s.total} cases)`);
  return out.join("\n");
}

function short(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 300 ? `${s.slice(0, 297)}...` : s;
}

/** Evidence links of every case, for a human (the JSON report carries them too). */
export function renderEvidence(cases: CaseResult[]): string {
  const out: string[] = [];
  for (const c of cases) {
    const receipt = c.evidence.find((e) => e.label.startsWith("stop receipt")) ?? c.evidence[0];
    if (receipt) out.push(`${pad(c.name, 44)} ${receipt.url}`);
  }
  return out.join("\n");
}

/** Report file name: evals/reports/<timestamp>.json with a filesystem-safe ISO time. */
export function reportFileName(at: Date): string {
  return `${at.toISOString().replace(/[:.]/g, "-")}.json`;
}
