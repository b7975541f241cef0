// The docs' shape: user pages short enough to read, measurements in the perf log, every index entry
// present, no tracker ids anywhere, migration headers of at most five lines, and every
// `docs/….md#heading` that code or tests cite still there.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { ROOT, anchors, docsFiles } from "./markdown";

/** The measurement history: long by nature, read by date, not a user page. */
const HISTORY = new Set(["docs/perf-log.md"]);
const MAX_LINES = 250;

const read = (rel: string) => readFileSync(path.join(ROOT, rel), "utf8");

/** A page's lines to read: the tables a script writes between markers (bench, config) do not count. */
const proseLines = (text: string) =>
  text
    .replace(/<!-- bench:([\w-]+):start -->[\s\S]*?<!-- bench:\1:end -->/g, "")
    .replace(/<!-- config-table:begin[\s\S]*?<!-- config-table:end[^>]*-->/g, "")
    .split("\n").length;

test(`every user doc and design note is at most ${MAX_LINES} lines of prose`, () => {
  const long = docsFiles()
    .filter((f) => !HISTORY.has(f))
    .map((f) => ({ f, lines: proseLines(read(f)) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ f, lines }) => `${f}: ${lines} lines`);
  expect(long).toEqual([]);
});

test("docs/README.md lists every page under docs/", () => {
  const index = read("docs/README.md");
  const missing = docsFiles()
    .filter((f) => f !== "docs/README.md")
    .map((f) => path.relative("docs", f))
    .filter((rel) => !index.includes(`(./${rel})`));
  expect(missing).toEqual([]);
});

test("every design note has its four parts", () => {
  const dir = path.join(ROOT, "docs/design");
  const notes = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".md")) : [];
  expect(notes.length).toBeGreaterThan(0);
  const incomplete = notes.filter((n) => {
    const a = anchors(read(`docs/design/${n}`));
    return !["context", "choice", "consequence", "the-figure"].every((h) => a.has(h));
  });
  expect(incomplete).toEqual([]);
});

test("the perf log is dated entries, newest first", () => {
  const dates = [...read("docs/perf-log.md").matchAll(/^## (\d{4}-\d{2}-\d{2})\b/gm)].map((m) => m[1]!);
  expect(dates.length).toBeGreaterThan(0);
  expect(dates).toEqual([...dates].sort().reverse());
});

/** Source, docs and config files of the repository (migrations too), skipping what is generated or vendored. */
function repoFiles(): string[] {
  const skip = new Set([
    "node_modules",
    ".git",
    ".next",
    "lib/generated",
    "bench/results",
    "evals/reports",
    ".quiesce",
    "test-results",
    "playwright-report",
    "out",
  ]);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(ROOT, dir || "."))) {
      const rel = dir ? `${dir}/${name}` : name;
      if (skip.has(rel) || skip.has(name)) continue;
      const st = statSync(path.join(ROOT, rel));
      if (st.isDirectory()) walk(rel);
      else if (/\.(ts|tsx|mts|mjs|cjs|js|md|sql|prisma|json|ya?ml)$/.test(name) && name !== "package-lock.json") out.push(rel);
    }
  };
  walk("");
  return out;
}

test("no tracker ids anywhere: docs, code, tests, migrations, bench output", () => {
  // "issue 17", "issue-17", "finding 9 of …", "#17", "round nine" as a tracker reference. Not one: React's
  // error #418, a colour ("#000"), a ticket in the demo data, a bench's measured rounds ("round 2").
  const tracker =
    /\bissues?[ -]#?\d+|\bfindings? \d+\b|(?<![\w&/#"]|ticket )#(?!418\b)\d{2,}\b|\brounds? (?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b/gi;
  const hits: string[] = [];
  for (const f of repoFiles()) {
    if (f === "test/docs/shape.test.ts") continue;
    read(f)
      .split("\n")
      .forEach((line, i) => {
        for (const m of line.matchAll(tracker)) hits.push(`${f}:${i + 1}: ${m[0]}`);
      });
  }
  expect(hits).toEqual([]);
});

const MAX_MIGRATION_HEADER = 5;

test(`every migration's leading comment is at most ${MAX_MIGRATION_HEADER} lines (the rest in a design note)`, () => {
  const dir = path.join(ROOT, "prisma/migrations");
  const names = readdirSync(dir).filter((n) => existsSync(path.join(dir, n, "migration.sql")));
  expect(names.length).toBeGreaterThan(0);
  const long = names
    .map((n) => {
      const lines = read(`prisma/migrations/${n}/migration.sql`).split("\n");
      const first = lines.findIndex((l) => l.trim() !== "");
      const end = lines.findIndex((l, i) => i >= first && !l.trimStart().startsWith("--"));
      return { n, header: (end < 0 ? lines.length : end) - first };
    })
    .filter(({ header }) => header > MAX_MIGRATION_HEADER)
    .map(({ n, header }) => `${n}: ${header} lines`);
  expect(long).toEqual([]);
});

test("every docs/….md#heading cited outside the docs resolves", () => {
  const broken: string[] = [];
  for (const f of repoFiles()) {
    if (f.endsWith(".md") && (f.startsWith("docs/") || f === "README.md" || f === "CONTRIBUTING.md")) continue; // links.test.ts
    for (const [, file, frag] of read(f).matchAll(/\b(docs\/[\w./-]+?\.md)(?:#([\w-]+))?/g)) {
      if (!existsSync(path.join(ROOT, file!))) broken.push(`${f}: ${file} (no such file)`);
      else if (frag && !anchors(read(file!)).has(frag)) broken.push(`${f}: ${file}#${frag} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});
