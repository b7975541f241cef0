// The OpenAPI-driven fuzzer: for every operation of the machine API, fast-check arbitraries are built
// from the document's JSON schemas (bodies, query parameters, path parameters) and mixed with hostile
// values — NUL bytes, lone surrogates, huge and fractional numbers, path traversal, SQL-shaped and LIKE
// text, deep nesting, wrong types, unknown fields, 10 MB bodies. Thousands of requests go to the real
// route handlers over real HTTP with a valid key (so they reach validation and the dal), and each answer
// must be < 500, carry an error body when it is a 4xx, and leave both teams unchanged when it refuses.
import { afterAll, beforeAll, expect, test } from "vitest";
import fc from "fast-check";
import { prisma } from "../../lib/platform/db/prisma";
import { buildOpenApiDocument } from "../../lib/schemas/openapi";
import { makeWorld, type World } from "../api/fixtures";

type Schema = Record<string, any>;
const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };
const REQUESTS = Number(process.env.QUIESCE_FUZZ_REQUESTS ?? 5200);

let w: World;
const ids = { runs: [] as string[], leases: [] as string[], ops: [] as string[], barriers: [] as string[] };

beforeAll(async () => {
  w = await makeWorld();
  for (const team of [w.a, w.b]) {
    const agent = w.client(team.keys.agent);
    const run = await agent.createRun({ taskId: "fuzz-target" });
    await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `fz-${run.runId}`, tool: "t" });
    const doomed = await agent.createRun({ taskId: "fuzz-barrier" });
    const { barrierId } = await w.client(team.keys.admin).kill(doomed.runId, "fuzz");
    ids.runs.push(run.runId, doomed.runId);
    ids.leases.push(run.leaseId);
    ids.ops.push(`fz-${run.runId}`);
    ids.barriers.push(barrierId);
  }
});
afterAll(async () => {
  await w?.close();
});

// ── Hostile values ────────────────────────────────────────────────────────────────────────────────
const hostileString = fc.constantFrom(
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ud83d",
  "../../../../etc/passwd",
  "..%2f..%2f",
  "%00",
  "%",
  "_",
  "\\",
  "'; DROP TABLE runs; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "\r\nSet-Cookie: x=1",
  " ",
  "",
  "\t",
  "🚀".repeat(300),
  "x".repeat(5000),
  "NaN",
  "-1",
  "1e309",
  "null",
  "[]",
  "{}",
  "__proto__",
  "constructor",
);
const hostileNumber = fc.constantFrom(
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53 + 1,
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  4294967296,
);
/** Poison woven into otherwise ordinary text: what PostgreSQL cannot store or Unicode does not allow. */
const poisoned = fc
  .tuple(fc.string({ maxLength: 8 }), fc.constantFrom("\u0000", "\ud800", "\udfff", "\ud83d"), fc.string({ maxLength: 8 }))
  .map(([a, p, b]) => a + p + b);
const hostileAny: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: poisoned },
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 2, arbitrary: fc.constantFrom(null, true, [], {}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      JSON.parse('{"__proto__":{"polluted":1}}'),
      Array.from({ length: 2000 }, (_, i) => i),
      deep(200),
    ),
  },
);
function deep(n: number): unknown {
  let v: unknown = "leaf";
  for (let i = 0; i < n; i++) v = { v };
  return v;
}

// ── JSON schema → arbitrary ──────────────────────────────────────────────────────────────────────
function resolve(s: Schema): Schema {
  if (s.$ref) return resolve(doc.components.schemas[String(s.$ref).split("/").pop()!]!);
  return s;
}

/** Values that satisfy the schema (hostile values are put in afterwards, one place at a time). */
function arb(schemaIn: Schema, depth = 0): fc.Arbitrary<unknown> {
  return validArb(resolve(schemaIn), depth);
}

/** Every leaf position of a JSON value, as a path of keys. */
function leaves(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (v === null || typeof v !== "object") return [at];
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  const out = entries.flatMap(([k, x]) => leaves(x, [...at, k]));
  return out.length ? out : [at];
}

/** A copy of `v` with the leaf at `path` replaced by `value` (or `value` itself for the root). */
function replaceAt(v: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  copy[path[0]!] = replaceAt(copy[path[0]!], path.slice(1), value);
  return copy;
}

/** Valid most of the time; otherwise exactly one leaf is hostile, or an unknown field is added. */
function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(base, fc.nat(), hostileAny, fc.integer({ min: 0, max: 9 })).map(([v, pick, bad, mode]) => {
    if (mode < 2) return v;
    if (mode === 9 && v && typeof v === "object" && !Array.isArray(v)) return { ...(v as object), unexpectedField: bad };
    const all = leaves(v);
    return replaceAt(v, all[pick % all.length]!, bad);
  });
}

function validArb(s: Schema, depth: number): fc.Arbitrary<unknown> {
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((x: Schema) => arb(x, depth + 1)));
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case "string":
      if (s.format === "date-time")
        return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
      return fc.oneof(
        fc.string({ minLength: Math.max(1, s.minLength ?? 1), maxLength: Math.min(s.maxLength ?? 40, 40) }),
        fc.string({ unit: "binary", minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) }),
        fc.constantFrom(...ids.runs, ...ids.leases, ...ids.ops, ...ids.barriers),
      );
    case "integer":
      return fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 });
    case "number":
      return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(s.items ? arb(s.items, depth + 1) : fc.string({ maxLength: 10 }), { maxLength: Math.min(s.maxItems ?? 5, 5) });
    case "object": {
      if (depth > 4) return fc.constant({});
      const props: Record<string, Schema> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) shape[k] = arb(v, depth + 1);
      const base = Object.keys(shape).length
        ? fc.record(shape, { requiredKeys: required.filter((k) => k in shape) })
        : fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()), {
            maxKeys: 3,
          });
      return base;
    }
    default:
      // Free-form JSON (detail, evidence): any JSON-ish value.
      return fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.integer(),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
      );
  }
}

const pathParam = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(...["runs", "leases", "ops", "barriers"].map((k) => k))
      .chain(() => fc.constantFrom(...ids.runs, ...ids.ops, ...ids.barriers)),
  },
  { weight: 2, arbitrary: hostileString.filter((v) => v.length > 0 && v.length < 1000) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
);

interface Op {
  method: string;
  path: string;
  operationId: string;
  body?: Schema;
  query: { name: string; schema: Schema }[];
  stream: boolean;
}
const OPS: Op[] = Object.entries(doc.paths).flatMap(([p, methods]) =>
  Object.entries(methods).map(([m, o]) => ({
    method: m.toUpperCase(),
    path: p,
    operationId: o.operationId,
    body: o.requestBody?.content?.["application/json"]?.schema,
    query: (o.parameters ?? []).filter((x: any) => x.in === "query").map((x: any) => ({ name: x.name, schema: x.schema ?? {} })),
    stream: Object.values(o.responses ?? {}).some((r: any) => r.content?.["text/event-stream"]),
  })),
);

const requestArb = fc.constantFrom(...OPS).chain((op) =>
  fc.record({
    op: fc.constant(op),
    params: fc.array(pathParam, { minLength: 3, maxLength: 3 }),
    body: op.body
      ? fc.oneof(
          { weight: 8, arbitrary: mutated(arb(op.body)) },
          { weight: 1, arbitrary: fc.constantFrom("{", "[1,2", "\u0000", "null", '"str"', '{"a":1}garbage') },
        )
      : fc.constant(undefined),
    query: mutated(
      fc.record(Object.fromEntries(op.query.map((q) => [q.name, arb(q.schema).map((v) => String(v))])), { requiredKeys: [] }),
    ).map((q) =>
      Object.fromEntries(Object.entries((q ?? {}) as object).map(([k, v]) => [k, typeof v === "string" ? v : (JSON.stringify(v) ?? "")])),
    ),
    key: fc.constantFrom(w.a.keys.admin, w.a.keys.agent, w.a.keys.worker, w.b.keys.admin),
  }),
);

async function fingerprint(): Promise<string> {
  const rows = await prisma().$queryRawUnsafe<{ f: string }[]>(
    `
    SELECT concat_ws('|',
      (SELECT md5(coalesce(string_agg(id || lifecycle || breaker || epoch || breaker_failures, ',' ORDER BY id), '')) FROM runs WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id || state, ',' ORDER BY id), '')) FROM operations WHERE team_id = ANY($1)),
      (SELECT count(*) FROM leases WHERE team_id = ANY($1)),
      (SELECT count(*) FROM barriers WHERE team_id = ANY($1)),
      (SELECT count(*) FROM effect_receipts WHERE team_id = ANY($1)),
      (SELECT md5(coalesce(string_agg(id::text || hash, ',' ORDER BY id), '')) FROM audit_events WHERE team_id = ANY($1))) AS f`,
    [w.a.teamId, w.b.teamId],
  );
  return rows[0]!.f;
}

/** encodeURIComponent, except that a lone surrogate is sent as its (invalid) UTF-8 bytes instead of throwing. */
function encodePathSegment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return [...v]
      .map((c) => {
        try {
          return encodeURIComponent(c);
        } catch {
          const cp = c.charCodeAt(0);
          return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
        }
      })
      .join("");
  }
}

const REFUSALS = new Set([400, 401, 403, 404, 405, 413, 422]);

test(`fuzz: ${REQUESTS} schema-driven and hostile requests, none answered >= 500, every 4xx with an error body, refusals change nothing`, async () => {
  const samples = fc.sample(requestArb, { numRuns: REQUESTS, seed: Number(process.env.QUIESCE_FUZZ_SEED ?? Date.now() % 2 ** 31) });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  // One request at a time keeps "nothing changed" exact: the state after one request is the state
  // before the next.
  let current = await fingerprint();
  for (const s of samples) {
    let i = 0;
    const url = s.op.path.replace(/\{[^}]+\}/g, () => encodePathSegment(s.params[i++] ?? "x"));
    const qs = new URLSearchParams(Object.entries(s.query as Record<string, string>)).toString();
    const text =
      s.body === undefined
        ? s.op.method === "POST"
          ? "{}"
          : undefined
        : typeof s.body === "string" && s.body.length < 20 && !s.body.startsWith('{"')
          ? s.body
          : JSON.stringify(s.body);
    const before = current;
    const ac = new AbortController();
    let status = 0;
    let body = "";
    try {
      const res = await fetch(`${w.server.url}${url}${qs ? `?${qs}` : ""}`, {
        method: s.op.method,
        signal: ac.signal,
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: text,
      });
      status = res.status;
      if (s.op.stream && status === 200) ac.abort();
      else body = await res.text();
    } catch (err) {
      failures.push(`${s.op.method} ${url}: request failed: ${(err as Error).message}`);
      current = await fingerprint();
      continue;
    }
    sent++;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const label = `${s.op.method} ${url} ${text?.slice(0, 120) ?? ""}`;
    if (status >= 500) failures.push(`${label} → ${status} ${body.slice(0, 200)}`);
    if (status >= 400 && status < 500) {
      let err: any = null;
      try {
        err = JSON.parse(body).error;
      } catch {
        /* not JSON */
      }
      // 431: the HTTP server refused the header size before any route ran (Node and Next alike).
      if (status !== 431 && (!err?.code || !err?.message)) failures.push(`${label} → ${status} without an error body`);
    }
    current = await fingerprint();
    if (REFUSALS.has(status) && current !== before) failures.push(`${label} → ${status} but something changed`);
    if (failures.length > 20) break;
  }
  // A few 10 MB bodies at the hot routes and a regular one: 413, not a buffered read.
  for (const p of ["/api/v1/gate", "/api/v1/runs", `/api/v1/operations/${ids.ops[0]}/complete`]) {
    const res = await fetch(w.server.url + p, {
      method: "POST",
      headers: { authorization: `Bearer ${w.a.keys.admin}`, "content-type": "application/json" },
      body: `{"x":"${"a".repeat(10 * 1024 * 1024)}"}`,
    });
    sent++;
    if (res.status !== 413) failures.push(`10 MB body to ${p} → ${res.status}`);
  }
  if (process.env.QUIESCE_FUZZ_DEBUG)
    console.log(JSON.stringify([...statuses]), JSON.stringify(samples.slice(0, 5).map((x) => [x.op.operationId, x.body])));
  expect(failures).toEqual([]);
  expect(sent).toBeGreaterThanOrEqual(Math.min(5000, REQUESTS));
  // The fuzzer reached past authentication and validation, too.
  expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true);
  expect(statuses.get(400) ?? 0).toBeGreaterThan(100);
}, 240_000);
