// Each SQL function's current definition lives in one source file, lib/<module>/sql/<function>.sql
// (CONTRIBUTING.md#a-sql-function); a migration that changes a function copies that file. This checks the two
// agree — body, arguments and attributes, and SET settings — in the files and in a migrated database, and
// that the check itself fails on each kind of drift (edited copies below).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { readMigrations } from "../lib/platform/db/migrate";
import { readSource, repoSources, sourceProblems, type FunctionDef } from "./support/sql-sources";

const migrations = readMigrations();
const sources = repoSources();
const source = (name: string) => sources.find((s) => s.file.endsWith(`/sql/${name}.sql`))!;
const later = (sql: string) => [...migrations, { name: "29991231000000_later", sql }];
const withoutSettings = (text: string) => text.replace(/^SET .*\n/gm, "");

describe("source files against the migrations", () => {
  test("every function the migrations define has its newest definition in its source file, and only those", () => {
    expect(sources.length).toBeGreaterThan(0);
    expect(sourceProblems(migrations, sources)).toEqual([]);
  });

  test("a migration that copies the source file agrees with it", () => {
    expect(sourceProblems(later(source("quiesce_gate").text), sources)).toEqual([]);
  });

  test("fails when the newest migration's body differs from the source file", () => {
    const edited = source("quiesce_gate").text.replace("'budget_exhausted') THEN v_reason := o_reason;", "'budget_exhausted') THEN NULL;");
    expect(edited).not.toBe(source("quiesce_gate").text);
    expect(sourceProblems(later(edited), sources)).toEqual([
      "quiesce_gate: the body in 29991231000000_later differs from lib/modules/gate/sql/quiesce_gate.sql",
    ]);
  });

  test("fails when the arguments or attributes differ", () => {
    const edited = source("quiesce_scope_matches").text.replace("LANGUAGE sql STABLE", "LANGUAGE sql VOLATILE");
    expect(sourceProblems(later(edited), sources)).toEqual([
      "quiesce_scope_matches: arguments or attributes in 29991231000000_later differ from lib/modules/stop/sql/quiesce_scope_matches.sql",
    ]);
  });

  test("fails when a newer CREATE OR REPLACE drops the SET settings", () => {
    expect(sourceProblems(later(withoutSettings(source("quiesce_gate_batch").text)), sources)).toEqual([
      "quiesce_gate_batch: settings after 29991231000000_later are [], lib/modules/gate/sql/quiesce_gate_batch.sql has " +
        "[enable_seqscan=off, plan_cache_mode=force_generic_plan]",
    ]);
  });

  test("a later ALTER FUNCTION … SET counts as the source's SET clause; a RESET drops it", () => {
    const created = source("quiesce_gate_batch").text.replace(/^SET plan_cache_mode .*\n/m, "");
    const sig = "quiesce_gate_batch(text[], text[], text[], integer[], text[], text[], text[], integer, integer, jsonb)";
    expect(sourceProblems(later(`${created}\nALTER FUNCTION ${sig}\n    SET plan_cache_mode = force_generic_plan;\n`), sources)).toEqual(
      [],
    );
    expect(sourceProblems(later(`ALTER FUNCTION ${sig} RESET plan_cache_mode;`), sources)).toEqual([
      "quiesce_gate_batch: settings after 29991231000000_later are [enable_seqscan=off], lib/modules/gate/sql/quiesce_gate_batch.sql has " +
        "[enable_seqscan=off, plan_cache_mode=force_generic_plan]",
    ]);
  });

  test("fails for a source file of a function no migration defines, and for a dropped one", () => {
    const stray = {
      file: "lib/modules/gate/sql/quiesce_gone.sql",
      text: source("quiesce_jcs").text.replace("quiesce_jcs(", "quiesce_gone("),
    };
    expect(sourceProblems(migrations, [...sources, stray])).toEqual([
      "lib/modules/gate/sql/quiesce_gone.sql: no migration defines quiesce_gone",
    ]);
    expect(sourceProblems(later("DROP FUNCTION quiesce_js_number(numeric);"), sources)).toEqual([
      "lib/modules/audit/sql/quiesce_js_number.sql: no migration defines quiesce_js_number",
    ]);
  });

  test("fails for a function defined in migrations that has no source file", () => {
    expect(
      sourceProblems(
        migrations,
        sources.filter((s) => !s.file.endsWith("/quiesce_jcs.sql")),
      ),
    ).toEqual(["quiesce_jcs (defined in 20261203003000_fleet_batch) has no source file lib/<module>/sql/quiesce_jcs.sql"]);
  });

  test("a source file holds one CREATE OR REPLACE FUNCTION named as the file", () => {
    const gate = source("quiesce_gate").text;
    expect(
      sourceProblems(migrations, [
        ...sources.filter((s) => s !== source("quiesce_gate")),
        { file: "lib/modules/gate/sql/quiesce_gate.sql", text: `${gate}\nSELECT 1;` },
      ]),
    ).toContain("lib/modules/gate/sql/quiesce_gate.sql: must hold exactly one CREATE OR REPLACE FUNCTION statement");
    expect(() =>
      readSource("lib/modules/gate/sql/quiesce_gate.sql", gate.replace("CREATE OR REPLACE FUNCTION", "CREATE FUNCTION")),
    ).toThrow(/CREATE OR REPLACE/);
    expect(() => readSource("lib/modules/gate/sql/other.sql", gate)).toThrow(
      "lib/modules/gate/sql/other.sql: defines quiesce_gate, not other",
    );
  });
});

describe("source files against the migrated database", () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  /**
   * Every disagreement between the database's functions and the source files. Each source is also
   * installed in a scratch schema (rolled back) so that pg_get_functiondef — arguments, return type,
   * language, volatility, settings and body as PostgreSQL holds them — can be compared whole. `first`
   * runs in the same transaction before the comparison (to show the check failing).
   */
  async function databaseProblems(first?: string): Promise<string[]> {
    const problems: string[] = [];
    await client.query("BEGIN");
    try {
      if (first) await client.query(first);
      const own = await client.query<{ proname: string; oid: number; prosrc: string; proconfig: string[] | null; def: string }>(
        `SELECT p.proname, p.oid, p.prosrc, p.proconfig, pg_get_functiondef(p.oid) AS def
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'public'
            AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`,
      );
      const defs = new Map<string, FunctionDef>(sources.map((s) => [readSource(s.file, s.text).name, readSource(s.file, s.text)]));
      for (const name of new Set(own.rows.map((r) => r.proname)))
        if (!defs.has(name)) problems.push(`${name}: in the database, no source file`);
      await client.query("CREATE SCHEMA quiesce_sql_sources; SET LOCAL search_path = quiesce_sql_sources, public");
      for (const s of sources) await client.query(s.text);
      const installed = await client.query<{ proname: string; def: string }>(
        `SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'quiesce_sql_sources'`,
      );
      for (const [name, def] of defs) {
        const rows = own.rows.filter((r) => r.proname === name);
        if (rows.length !== 1) {
          problems.push(`${name}: ${rows.length} definitions in the database`);
          continue;
        }
        const row = rows[0]!;
        if (row.prosrc !== def.body) problems.push(`${name}: body differs`);
        const config = [...(row.proconfig ?? [])].sort();
        if (config.join(" ") !== def.settings.join(" "))
          problems.push(`${name}: settings [${config.join(", ")}], source [${def.settings.join(", ")}]`);
        const mine = installed.rows
          .find((r) => r.proname === name)!
          .def.replace(`FUNCTION quiesce_sql_sources.${name}(`, `FUNCTION public.${name}(`);
        if (mine !== row.def) problems.push(`${name}: pg_get_functiondef differs`);
      }
    } finally {
      await client.query("ROLLBACK");
    }
    return problems;
  }

  test("each function in the database is the one its source file defines, settings included", async () => {
    expect(await databaseProblems()).toEqual([]);
  });

  test("fails when the database's function lost its settings, or has a function without a source file", async () => {
    expect(await databaseProblems(withoutSettings(source("quiesce_gate_batch").text))).toEqual([
      "quiesce_gate_batch: settings [], source [enable_seqscan=off, plan_cache_mode=force_generic_plan]",
      "quiesce_gate_batch: pg_get_functiondef differs",
    ]);
    expect(await databaseProblems("CREATE FUNCTION public.quiesce_stray() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$")).toEqual([
      "quiesce_stray: in the database, no source file",
    ]);
  });
});
