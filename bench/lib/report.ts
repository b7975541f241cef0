// Bench output: Markdown tables (printed, saved under bench/results/, and optionally written into
// docs/benchmarks.md between a section's markers).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface BenchTable {
  title: string;
  columns: string[];
  rows: string[][];
  notes: string[];
}

export function markdown(t: BenchTable): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    `#### ${t.title}`,
    "",
    line(t.columns),
    line(t.columns.map(() => "---")),
    ...t.rows.map(line),
    "",
    ...t.notes.map((n) => `- ${n}`),
  ]
    .join("\n")
    .trimEnd();
}

export const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
export const ratio = (x: number) => `${x.toFixed(2)}×`;
/** Microseconds, rounded; "n/a" where a figure could not be measured. */
export const us = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "n/a" : String(Math.round(x)));

/** Replaces the text between `<!-- bench:<name>:start -->` and `<!-- bench:<name>:end -->`. */
export function writeIntoDocs(docsFile: string, section: string, body: string): boolean {
  if (!existsSync(docsFile)) return false;
  const text = readFileSync(docsFile, "utf8");
  const start = `<!-- bench:${section}:start -->`;
  const end = `<!-- bench:${section}:end -->`;
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return false;
  writeFileSync(docsFile, `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`);
  return true;
}

export function saveResult(dir: string, section: string, data: unknown, md: string): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = path.join(dir, `${section}-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  writeFileSync(path.join(dir, `${section}-latest.md`), `${md}\n`);
  return file;
}
