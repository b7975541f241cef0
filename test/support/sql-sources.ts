// The SQL functions' source files (`lib/**/sql/<function>.sql`, CONTRIBUTING.md#a-sql-function) against what
// the migrations define: a small reader of PostgreSQL statements (comments, quoted strings and dollar
// quotes skipped), enough to find each function's newest CREATE and the ALTER / DROP after it.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** One CREATE [OR REPLACE] FUNCTION statement, read apart. */
export interface FunctionDef {
  name: string;
  /** Everything outside the body but the SET clauses: arguments, return type, language, volatility … (comments dropped, blanks collapsed). */
  head: string;
  /** The text between the dollar quotes, exactly as PostgreSQL stores it in pg_proc.prosrc. */
  body: string;
  /** `name=value`, sorted, as pg_proc.proconfig holds them. */
  settings: string[];
}

/** The newest definition of each function after every migration ran, with the migration that wrote it. */
export interface Defined extends FunctionDef {
  migration: string;
}

/** Splits a script into its top-level statements (without the `;`), each as written, comments included. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      i = j + 1;
    } else if (c === "$" && /^\$(?:[A-Za-z_]\w*)?\$/.test(sql.slice(i, i + 64)) && !/[\w$]/.test(sql[i - 1] ?? " ")) {
      const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      if (end < 0) throw new Error(`unterminated dollar quote ${tag}`);
      i = end + tag.length;
    } else if (c === ";") {
      if (sql.slice(start, i).trim()) out.push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  if (sql.slice(start).trim() && stripComments(sql.slice(start)).trim()) out.push(sql.slice(start));
  return out;
}

/** The statement's code without comments; dollar-quoted text kept as is. */
function stripComments(stmt: string): string {
  return stmt.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|\$((?:[A-Za-z_]\w*)?)\$[\s\S]*?\$\1\$|'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (m) =>
    m.startsWith("--") || m.startsWith("/*") ? " " : m,
  );
}

const SETTING = /\bSET\s+([A-Za-z_][\w.]*)\s*(?:=|\bTO\b)\s*('(?:[^']|'')*'|[^\s,']+(?:\s*,\s*[^\s,']+)*)/gi;
const unquote = (v: string) => (v.startsWith("'") ? v.slice(1, -1).replace(/''/g, "'") : v);
const setting = (name: string, value: string) => `${name.toLowerCase()}=${unquote(value)}`;
const bareName = (n: string) => n.replace(/"/g, "").replace(/^public\./i, "");

/** Reads a CREATE [OR REPLACE] FUNCTION statement apart; null for any other statement. */
export function parseCreateFunction(stmt: string): FunctionDef | null {
  const code = stripComments(stmt);
  const m = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+((?:"[^"]+"|[\w]+)(?:\.(?:"[^"]+"|\w+))?)\s*\(/i.exec(code);
  if (!m) return null;
  const quote = /\bAS\s+(\$((?:[A-Za-z_]\w*)?)\$)([\s\S]*?)\1/i.exec(code);
  if (!quote) throw new Error(`function ${m[1]}: no dollar-quoted body after AS`);
  const outside = code.slice(m[0].length - 1, quote.index) + " AS <body> " + code.slice(quote.index + quote[0].length);
  const settings = [...outside.matchAll(SETTING)].map((s) => setting(s[1]!, s[2]!)).sort();
  const head = outside
    .replace(SETTING, " ")
    .replace(/\s+/g, " ")
    .replace(/\s*([(),])\s*/g, "$1")
    .trim();
  return { name: bareName(m[1]!), head, body: quote[3]!, settings };
}

/** Applies every migration's function statements in order: the newest CREATE of each function, its settings after later ALTERs. */
export function definedByMigrations(migrations: { name: string; sql: string }[]): Map<string, Defined> {
  const defined = new Map<string, Defined>();
  for (const mig of migrations) {
    for (const stmt of splitStatements(mig.sql)) {
      const created = parseCreateFunction(stmt);
      if (created) {
        defined.set(created.name, { ...created, migration: mig.name });
        continue;
      }
      const code = stripComments(stmt).trim();
      const drop = /^DROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?([\s\S]*?)(?:\s+(?:CASCADE|RESTRICT))?$/i.exec(code);
      if (drop) {
        for (const target of drop[1]!.replace(/\([^)]*\)/g, "").split(",")) defined.delete(bareName(target.trim()));
        continue;
      }
      const alter = /^ALTER\s+FUNCTION\s+((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)\s*(?:\([^)]*\))?\s+([\s\S]*)$/i.exec(code);
      if (!alter) continue;
      const fn = defined.get(bareName(alter[1]!));
      if (!fn) throw new Error(`${mig.name}: ALTER FUNCTION ${alter[1]} before any CREATE of it`);
      // Only settings are folded into the source's SET clauses; any other ALTER changes the definition in
      // a way this reader does not model, so it fails until the reader (and the source) learn it.
      let rest = alter[2]!.trim();
      const settings = new Map(fn.settings.map((s) => [s.slice(0, s.indexOf("=")), s]));
      while (rest) {
        const set = /^SET\s+([A-Za-z_][\w.]*)\s*(?:=|\bTO\b)\s*('(?:[^']|'')*'|[^\s,']+(?:\s*,\s*[^\s,']+)*)\s*/i.exec(rest);
        const reset = /^RESET\s+([A-Za-z_][\w.]*)\s*/i.exec(rest);
        if (set) settings.set(set[1]!.toLowerCase(), setting(set[1]!, set[2]!));
        else if (reset && reset[1]!.toUpperCase() === "ALL") settings.clear();
        else if (reset) settings.delete(reset[1]!.toLowerCase());
        else throw new Error(`${mig.name}: ALTER FUNCTION ${alter[1]} ${rest}: only SET and RESET are understood`);
        rest = rest.slice((set ?? reset)![0].length);
      }
      defined.set(fn.name, { ...fn, settings: [...settings.values()].sort(), migration: mig.name });
    }
  }
  return defined;
}

/** Every `lib/**\/sql/*.sql` file, relative to the repository root. */
export function sourceFiles(root = ROOT): string[] {
  return readdirSync(path.join(root, "lib"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".sql") && path.basename(path.dirname(f)) === "sql")
    .map((f) => path.join("lib", f))
    .sort();
}

/** A source file holds exactly one CREATE OR REPLACE FUNCTION statement, of the function it is named after. */
export function readSource(file: string, text: string): FunctionDef {
  const stmts = splitStatements(text);
  const def = stmts.length === 1 ? parseCreateFunction(stmts[0]!) : null;
  if (!def || !/^\s*CREATE\s+OR\s+REPLACE\s+FUNCTION\b/i.test(stripComments(stmts[0]!)))
    throw new Error(`${file}: must hold exactly one CREATE OR REPLACE FUNCTION statement`);
  if (def.name !== path.basename(file, ".sql")) throw new Error(`${file}: defines ${def.name}, not ${path.basename(file, ".sql")}`);
  return def;
}

/** Every disagreement between the migrations and the source files (empty when they agree). */
export function sourceProblems(migrations: { name: string; sql: string }[], sources: { file: string; text: string }[]): string[] {
  const defined = definedByMigrations(migrations);
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const { file, text } of sources) {
    let src: FunctionDef;
    try {
      src = readSource(file, text);
    } catch (e) {
      problems.push((e as Error).message);
      continue;
    }
    if (seen.has(src.name)) problems.push(`${src.name}: two source files, ${seen.get(src.name)} and ${file}`);
    seen.set(src.name, file);
    const mig = defined.get(src.name);
    if (!mig) {
      problems.push(`${file}: no migration defines ${src.name}`);
      continue;
    }
    if (mig.body !== src.body) problems.push(`${src.name}: the body in ${mig.migration} differs from ${file}`);
    if (mig.head !== src.head) problems.push(`${src.name}: arguments or attributes in ${mig.migration} differ from ${file}`);
    if (mig.settings.join(" ") !== src.settings.join(" "))
      problems.push(
        `${src.name}: settings after ${mig.migration} are [${mig.settings.join(", ")}], ${file} has [${src.settings.join(", ")}]`,
      );
  }
  for (const [name, mig] of defined)
    if (!seen.has(name)) problems.push(`${name} (defined in ${mig.migration}) has no source file lib/<module>/sql/${name}.sql`);
  return problems;
}

/** The repository's own sources. */
export function repoSources(root = ROOT): { file: string; text: string }[] {
  return sourceFiles(root).map((file) => ({ file, text: readFileSync(path.join(root, file), "utf8") }));
}
