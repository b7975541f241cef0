// The raw-pool SQL helper (lib/platform/db/sql.ts) against the real PostgreSQL: values travel as
// parameters (or as escaped literals in BEGIN's round trip), never spliced; a throw rolls back.
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { query, sql, toQuery, transaction } from "../../lib/platform/db/sql";
import { pool } from "../../lib/platform/db/pool";

const HOSTILE = `x'); DROP TABLE runs; --`;

describe("rendering", () => {
  test("values become numbered parameters; nested fragments are inlined in order", () => {
    const where = sql`team_id = ${"t1"} AND id = ANY (${["a", "b"]})`;
    const q = toQuery(sql`SELECT ${1} AS one FROM runs WHERE ${where} LIMIT ${50}`);
    expect(q.text).toBe("SELECT $1 AS one FROM runs WHERE team_id = $2 AND id = ANY ($3) LIMIT $4");
    expect(q.values).toEqual([1, "t1", ["a", "b"], 50]);
  });

  test("join and raw; numbering may start later", () => {
    const cols = sql.join([sql.raw("a"), sql.raw("b")]);
    const rows = sql.join([sql`(${1}, ${2})`, sql`(${3}, ${4})`]);
    expect(toQuery(sql`INSERT INTO t (${cols}) VALUES ${rows}`, 3)).toEqual({
      text: "INSERT INTO t (a, b) VALUES ($3, $4), ($5, $6)",
      values: [1, 2, 3, 4],
    });
    expect(toQuery(sql.join([])).text).toBe("");
  });

  test("property: no value's text ever appears in the statement text", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ minLength: 1 }).map((s) => `§${s}§`),
          { minLength: 1, maxLength: 6 },
        ),
        (vals) => {
          const q = toQuery(
            sql.join(
              vals.map((v) => sql`${v}`),
              " AND ",
            ),
          );
          for (const v of vals) expect(q.text.includes(v)).toBe(false);
          expect(q.values).toEqual(vals);
        },
      ),
    );
  });
});

describe("on PostgreSQL", () => {
  afterAll(async () => {
    await pool().end();
  });

  test("a hostile string is data, as a parameter and as an opening literal", async () => {
    const [row] = await query<{ v: string }>(sql`SELECT ${HOSTILE}::text AS v`);
    expect(row!.v).toBe(HOSTILE);
    const opened = await transaction(async (_tx, rows) => rows, { open: sql`SELECT ${HOSTILE}::text AS v, ${7} AS n, ${null}::text AS z` });
    expect(opened).toEqual([{ v: HOSTILE, n: 7, z: null }]);
    const [t] = await query<{ n: string }>(sql`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'runs'`);
    expect(Number(t!.n)).toBe(1);
  });

  test("commit on return, rollback on throw", async () => {
    await query(sql`CREATE TABLE IF NOT EXISTS sql_helper_probe (v text)`);
    await transaction(async (tx) => {
      await tx.query(sql`INSERT INTO sql_helper_probe VALUES (${"kept"})`);
    });
    await expect(
      transaction(async (tx) => {
        await tx.query(sql`INSERT INTO sql_helper_probe VALUES (${"dropped"})`);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const rows = await query<{ v: string }>(sql`SELECT v FROM sql_helper_probe ORDER BY v`);
    expect(rows.map((r) => r.v)).toEqual(["kept"]);
    await query(sql`DROP TABLE sql_helper_probe`);
  });

  test("an opening value of another type is refused before anything runs", async () => {
    await expect(transaction(async () => 1, { open: sql`SELECT ${{ a: 1 }}::jsonb` })).rejects.toThrow(TypeError);
  });
});
