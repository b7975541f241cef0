// SQL off the ORM, one way: a tagged template numbers its values ($1, $2, …) so nothing is spliced into
// the text, and a transaction on the raw pool may carry its opening statements (a lock, the row it
// guards) in BEGIN's own round trip — rendered by the helper, never by hand (docs/design/sql-helper.md).
import type pg from "pg";
import { pool } from "./pool";

type Value = unknown;

/** A piece of SQL with its values kept apart. Build with `sql`; nest freely; render with `toQuery`. */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly Value[],
  ) {}
}

/** `sql\`SELECT … WHERE id = ${id}\``: each `${}` becomes a parameter, or is inlined if it is itself `Sql`. */
export function sql(strings: TemplateStringsArray, ...values: Value[]): Sql {
  return new Sql([...strings], values);
}

/** Constant SQL written in the code (an identifier, a fragment shared between statements) — never input. */
sql.raw = (text: string): Sql => new Sql([text], []);

/** Fragments joined by a separator, e.g. a column list or a VALUES list. */
sql.join = (parts: readonly Sql[], separator = ", "): Sql => {
  if (parts.length === 0) return new Sql([""], []);
  const strings: string[] = [];
  const values: Value[] = [];
  parts.forEach((p, i) => {
    strings.push(i === 0 ? "" : separator);
    values.push(p);
  });
  strings.push("");
  return new Sql(strings, values);
};

/** The statement text with `$n` placeholders and its values, numbered from `first`. */
export function toQuery(q: Sql, first = 1): { text: string; values: Value[] } {
  const values: Value[] = [];
  const text = render(q, (v) => {
    values.push(v);
    return `$${first + values.length - 1}`;
  });
  return { text, values };
}

function render(q: Sql, param: (v: Value) => string): string {
  let text = q.strings[0] ?? "";
  q.values.forEach((v, i) => {
    text += (v instanceof Sql ? render(v, param) : param(v)) + (q.strings[i + 1] ?? "");
  });
  return text;
}

/**
 * The statement as one simple-protocol text, values written as literals by node-postgres's own escaping.
 * Only for the statements sent with BEGIN (the simple protocol takes no parameters).
 */
function toLiteralText(q: Sql, client: pg.PoolClient): string {
  return render(q, (v) => {
    if (v === null || v === undefined) return "NULL";
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
    if (typeof v === "string") return client.escapeLiteral(v);
    throw new TypeError("an opening statement takes strings, numbers, booleans or null");
  });
}

/** Rows as node-postgres returns them (bigint as string, json parsed). */
export type Row = Record<string, unknown>;

export interface SqlClient {
  query<T extends object = Row>(q: Sql): Promise<T[]>;
}

function clientOf(db: pg.Pool | pg.PoolClient): SqlClient {
  return {
    async query<T extends object = Row>(q: Sql) {
      const { text, values } = toQuery(q);
      return (await db.query<T>(text, values)).rows;
    },
  };
}

/** One statement on the pool (or on a client you hold). */
export async function query<T extends object = Row>(q: Sql, db: pg.Pool | pg.PoolClient = pool()): Promise<T[]> {
  return clientOf(db).query<T>(q);
}

export interface TransactionOptions {
  /**
   * Statements sent with BEGIN in one round trip (e.g. an advisory lock and the row it guards); the rows
   * of the last one are handed to the body. Values are rendered as literals by the helper.
   */
  open?: Sql;
}

/**
 * One transaction on a pooled connection: BEGIN (with `open`) in one round trip, `fn`, then COMMIT; on a
 * throw ROLLBACK, and a connection whose ROLLBACK failed is destroyed instead of returned to the pool.
 */
export async function transaction<T>(fn: (tx: SqlClient, opened: Row[]) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  const client = await pool().connect();
  let broken: Error | undefined;
  try {
    // A multi-statement simple query answers one result per statement.
    const res = (await client.query(opts.open ? `BEGIN; ${toLiteralText(opts.open, client)}` : "BEGIN")) as unknown as
      pg.QueryResult | pg.QueryResult[];
    const last = Array.isArray(res) ? res[res.length - 1] : res;
    const result = await fn(clientOf(client), opts.open ? (last?.rows ?? []) : []);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch((e: Error) => {
      broken = e; // the connection is unusable: destroy it instead of returning it to the pool
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
