// Two descriptions of the same schema as sets of comparable lines, for test/schema-drift.test.ts:
//  - expectedShape(schema.prisma text): from Prisma's own parser (getDMMF, the wasm schema engine that
//    `prisma generate` uses), mapped to what Prisma's migrate would create in PostgreSQL;
//  - actualShape(database url): read from pg_catalog of a migrated database.
// Lines look like `column runs.lifecycle "Lifecycle" not null default=normal`, so a difference reads
// as plain text in the failure message.
import { getDMMF } from "@prisma/get-dmmf";
import pg from "pg";

export type Shape = Set<string>;

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: string;
  type: string;
  isList: boolean;
  isRequired: boolean;
  isUpdatedAt?: boolean;
  hasDefaultValue: boolean;
  default?: unknown;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  fields: { name: string }[];
}
interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName: string | null }[];
}

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  DateTime: "timestamp(3) without time zone",
  Boolean: "boolean",
  Json: "jsonb",
  Bytes: "bytea",
};

function nativeTypeSql(name: string, args: string[]): string {
  const a = args.length ? `(${args.join(",")})` : "";
  const map: Record<string, string> = {
    Text: "text",
    VarChar: `character varying${a}`,
    Char: `character${a}`,
    Uuid: "uuid",
    Integer: "integer",
    SmallInt: "smallint",
    BigInt: "bigint",
    Real: "real",
    DoublePrecision: "double precision",
    Decimal: `numeric${a}`,
    Boolean: "boolean",
    Timestamp: `timestamp${a} without time zone`,
    Timestamptz: `timestamp${a} with time zone`,
    Date: "date",
    Time: `time${a} without time zone`,
    Timetz: `time${a} with time zone`,
    Json: "json",
    JsonB: "jsonb",
    ByteA: "bytea",
    Inet: "inet",
    Xml: "xml",
    Citext: "citext",
    Money: "money",
    Oid: "oid",
  };
  const sql = map[name];
  if (!sql) throw new Error(`schema-shape: unmapped native type @db.${name}; add it to nativeTypeSql`);
  return sql;
}

/** PostgreSQL quotes identifiers that are not plain lower-case, as format_type() prints them. */
function ident(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** Client-side defaults (uuid(), cuid(), …) and @updatedAt leave the column without a database default. */
function expectedDefault(f: DmmfField): string | null {
  if (!f.hasDefaultValue || f.isUpdatedAt) return null;
  const d = f.default as { name?: string; args?: unknown[] } | string | number | boolean | unknown[];
  if (d !== null && typeof d === "object" && !Array.isArray(d) && "name" in d) {
    if (["uuid", "cuid", "nanoid", "ulid"].includes(d.name!)) return null;
    if (d.name === "now") return "now";
    if (d.name === "autoincrement" || d.name === "sequence") return "autoincrement";
    if (d.name === "dbgenerated") return normalizeDefault(String(d.args?.[0] ?? ""), "");
    return d.name!;
  }
  return Array.isArray(d) ? `{${d.join(",")}}` : String(d);
}

export function expectedShape(schema: string): Shape {
  const dmmf = getDMMF({ datamodel: schema });
  if ("type" in dmmf && (dmmf as { type?: string }).type)
    throw new Error(`schema.prisma does not parse: ${(dmmf as { reason: string }).reason}`);
  const dm = (dmmf as unknown as { datamodel: { models: DmmfModel[]; enums: DmmfEnum[]; indexes: DmmfIndex[] } }).datamodel;
  const out: Shape = new Set();
  const tableOf = new Map(dm.models.map((m) => [m.name, m.dbName ?? m.name]));
  const colOf = (model: string, field: string) => {
    const f = dm.models.find((m) => m.name === model)!.fields.find((x) => x.name === field)!;
    return f.dbName ?? f.name;
  };
  for (const e of dm.enums) out.add(`enum ${e.dbName ?? e.name} [${e.values.map((v) => v.dbName ?? v.name).join(",")}]`);
  for (const m of dm.models) {
    const table = tableOf.get(m.name)!;
    out.add(`table ${table}`);
    for (const f of m.fields) {
      if (f.kind === "object") {
        if (!f.relationFromFields?.length) continue;
        const from = f.relationFromFields.map((x) => colOf(m.name, x));
        const to = f.relationToFields!.map((x) => colOf(f.type, x));
        const optional = f.relationFromFields.some((x) => !m.fields.find((y) => y.name === x)!.isRequired);
        const onDelete = f.relationOnDelete ?? (optional ? "SetNull" : "Restrict");
        const onUpdate = f.relationOnUpdate ?? "Cascade";
        out.add(
          `fk ${table}_${from.join("_")}_fkey ${table}(${from.join(",")}) -> ${tableOf.get(f.type)}(${to.join(",")}) on delete ${onDelete.toLowerCase()} on update ${onUpdate.toLowerCase()}`,
        );
        continue;
      }
      const base =
        f.kind === "enum"
          ? ident(dm.enums.find((e) => e.name === f.type)?.dbName ?? f.type)
          : f.nativeType
            ? nativeTypeSql(f.nativeType[0], f.nativeType[1])
            : SCALAR_TYPES[f.type];
      if (!base) throw new Error(`schema-shape: unmapped scalar type ${f.type}`);
      // Prisma creates list columns nullable, whatever the field says.
      const notNull = f.isRequired && !f.isList;
      const def = expectedDefault(f);
      out.add(
        `column ${table}.${f.dbName ?? f.name} ${base}${f.isList ? "[]" : ""} ${notNull ? "not null" : "null"}${def === null ? "" : ` default=${def}`}`,
      );
    }
  }
  // Prisma's parser leaves Unsupported("<SQL type>") fields out of its model: read them from the schema text.
  for (const m of dm.models) {
    const body = new RegExp(`^model ${m.name} \\{([\\s\\S]*?)^\\}`, "m").exec(schema)?.[1] ?? "";
    for (const u of body.matchAll(/^\s*(\w+)\s+Unsupported\("([^"]+)"\)(\?)?([^\n]*)$/gm)) {
      const column = /@map\("([^"]+)"\)/.exec(u[4]!)?.[1] ?? u[1]!;
      out.add(`column ${tableOf.get(m.name)}.${column} ${u[2]} ${u[3] ? "null" : "not null"}`);
    }
  }
  for (const ix of dm.indexes) {
    const table = tableOf.get(ix.model)!;
    const cols = ix.fields.map((x) => colOf(ix.model, x.name));
    const kind = ix.type === "id" ? "primary" : ix.type === "unique" ? "unique" : "index";
    const suffix = ix.type === "id" ? "pkey" : ix.type === "unique" ? "key" : "idx";
    const name = ix.dbName ?? (ix.type === "id" ? `${table}_pkey` : `${table}_${cols.join("_")}_${suffix}`);
    out.add(`${kind} ${name} ${table}(${cols.join(",")})`);
  }
  return out;
}

function normalizeDefault(expr: string | null, identity: string): string | null {
  if (identity) return "autoincrement";
  if (expr === null) return null;
  if (/^nextval\(/i.test(expr)) return "autoincrement";
  let v = expr.trim();
  while (/::[\w" .[\]()]+$/.test(v) && !/^'.*'$/.test(v)) v = v.replace(/::[\w" .[\]()]+$/, "");
  if (/^(CURRENT_TIMESTAMP|now\(\))(\(\d+\))?$/i.test(v)) return "now";
  if (/^'.*'$/.test(v)) v = v.slice(1, -1).replace(/''/g, "'");
  return v;
}

const FK_ACTION: Record<string, string> = { a: "noaction", r: "restrict", c: "cascade", n: "setnull", d: "setdefault" };

export async function actualShape(url: string): Promise<Shape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Shape = new Set();
    const user = `n.nspname = 'public' AND c.relname <> '_prisma_migrations'`;
    for (const r of (
      await client.query(`SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
        FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' GROUP BY t.typname`)
    ).rows)
      out.add(`enum ${r.typname} [${r.labels.join(",")}]`);
    for (const r of (
      await client.query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE ${user} AND c.relkind IN ('r','p') AND NOT c.relispartition`)
    ).rows)
      out.add(`table ${r.relname}`);
    for (const r of (
      await client.query(`SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
          pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE ${user} AND c.relkind IN ('r','p') AND NOT c.relispartition AND a.attnum > 0 AND NOT a.attisdropped`)
    ).rows) {
      const def = normalizeDefault(r.def, r.attidentity);
      out.add(`column ${r.relname}.${r.attname} ${r.type} ${r.attnotnull ? "not null" : "null"}${def === null ? "" : ` default=${def}`}`);
    }
    for (const r of (
      await client.query(`SELECT i.relname AS name, c.relname AS tbl, x.indisunique, x.indisprimary,
          x.indpred IS NOT NULL AS partial, x.indexprs IS NOT NULL AS expr,
          array(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord) AS cols
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${user} AND NOT c.relispartition`)
    ).rows) {
      const kind = r.indisprimary ? "primary" : r.indisunique ? "unique" : "index";
      const extra = `${r.partial ? " partial" : ""}${r.expr ? " expression" : ""}`;
      out.add(`${kind} ${r.name} ${r.tbl}(${r.cols.join(",")})${extra}`);
    }
    for (const r of (
      await client.query(`SELECT con.conname, c.relname AS tbl, f.relname AS ref, con.confdeltype, con.confupdtype,
          array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, ord) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.ord) AS cols,
          array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, ord) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.ord) AS refcols
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_class f ON f.oid = con.confrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE con.contype = 'f' AND ${user} AND NOT c.relispartition`)
    ).rows) {
      out.add(
        `fk ${r.conname} ${r.tbl}(${r.cols.join(",")}) -> ${r.ref}(${r.refcols.join(",")}) on delete ${FK_ACTION[r.confdeltype]} on update ${FK_ACTION[r.confupdtype]}`,
      );
    }
    return out;
  } finally {
    await client.end();
  }
}

export interface Drift {
  missingInDatabase: string[];
  notInSchema: string[];
}

export function diffShapes(expected: Shape, actual: Shape): Drift {
  return {
    missingInDatabase: [...expected].filter((l) => !actual.has(l)).sort(),
    notInSchema: [...actual].filter((l) => !expected.has(l)).sort(),
  };
}
