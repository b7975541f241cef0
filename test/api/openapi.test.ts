// The OpenAPI document: public, a valid OpenAPI 3.1 document (checked against the official schema),
// lists every method of every app/api/v1 route file, every $ref resolves, and real responses of the
// real handlers validate against the schemas it publishes (they come from the same zod schemas).
import { afterAll, beforeAll, expect, test } from "vitest";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { makeWorld, raw, type World } from "./fixtures";
import { buildOpenApiDocument } from "../../lib/schemas/openapi";

let w: World;
let doc: any;
beforeAll(async () => {
  w = await makeWorld();
  const r = await raw(w.server.url, "GET", "/api/v1/openapi.json", { key: null });
  expect(r.status).toBe(200);
  doc = JSON.parse(r.text);
});
afterAll(async () => {
  await w?.close();
});

const API_DIR = path.resolve(import.meta.dirname, "../../app/api/v1");
function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const f = path.join(dir, n);
    return statSync(f).isDirectory() ? routeFiles(f) : n === "route.ts" ? [f] : [];
  });
}

test("is served without a key and is a valid OpenAPI 3.1 document", async () => {
  expect(doc.openapi).toBe("3.1.0");
  const v = new Validator();
  const res = await v.validate(structuredClone(doc));
  expect(res.errors ?? [], JSON.stringify(res.errors, null, 1)).toEqual([]);
  expect(res.valid).toBe(true);
});

test("the served document is the one built from the schemas, byte for byte, on every request", async () => {
  const expected = JSON.stringify(buildOpenApiDocument());
  for (let i = 0; i < 3; i++) {
    const r = await raw(w.server.url, "GET", "/api/v1/openapi.json", { key: null });
    expect(r.status).toBe(200);
    expect(r.text).toBe(expected);
  }
});

test("lists every method of every route file under app/api/v1, and nothing that does not exist", async () => {
  const expected: string[] = [];
  for (const file of routeFiles(API_DIR)) {
    const rel = path
      .relative(path.resolve(API_DIR, "../.."), path.dirname(file))
      .split(path.sep)
      .map((s) => s.replace(/^\[(.+)\]$/, "{$1}"))
      .join("/");
    const mod = await import(pathToFileURL(file).href);
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"])
      if (typeof mod[m] === "function") expected.push(`${m.toLowerCase()} /${rel}`);
  }
  const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${p}`));
  expect(documented.sort()).toEqual(expected.sort());
  for (const p of [
    "/api/v1/runs",
    "/api/v1/gate",
    "/api/v1/operations",
    "/api/v1/runs/{runId}/pause",
    "/api/v1/runs/{runId}/breaker",
    "/api/v1/operations/{operationId}/complete",
  ]) {
    expect(doc.paths[p], p).toBeDefined();
  }
});

test("every $ref resolves and every named schema compiles as JSON Schema 2020-12", () => {
  const refs = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string") refs.add(x);
        else walk(x);
      }
    }
  };
  walk(doc);
  expect(refs.size).toBeGreaterThan(10);
  for (const ref of refs) {
    expect(ref).toMatch(/^#\/components\/schemas\//);
    expect(doc.components.schemas[ref.split("/").pop()!], ref).toBeDefined();
  }
  const ajv = addFormats(new Ajv2020({ strict: false }));
  ajv.addSchema({ $id: "doc", components: doc.components });
  for (const name of Object.keys(doc.components.schemas)) {
    // getSchema answers undefined for a name it cannot find and throws on an unresolvable $ref inside
    expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).toBeTypeOf("function");
  }
});

test("real responses validate against the published response schemas", async () => {
  const ajv = addFormats(new Ajv2020({ strict: false }));
  ajv.addSchema({ $id: "doc", components: doc.components });
  const check = (p: string, method: string, status: number, body: unknown) => {
    const schema = doc.paths[p][method].responses[String(status)].content["application/json"].schema;
    const validate = ajv.compile({ $ref: `doc${schema.$ref}` });
    expect(validate(body), `${method} ${p} ${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
  };
  const agent = w.client(w.a.keys.agent);
  const { status, ...run } = await agent.createRun({ taskId: "doc" });
  check("/api/v1/runs", "post", 201, run);
  const { status: s2, ...child } = await agent.createRun({ taskId: "doc", parentRunId: run.runId });
  check("/api/v1/runs", "post", 201, child);
  check("/api/v1/runs/{runId}", "get", 200, await agent.getRun(run.runId));
  check("/api/v1/runs", "get", 200, await agent.listRuns({ limit: 3 }));
  check(
    "/api/v1/gate",
    "post",
    200,
    await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: 1, operationId: "doc-1", tool: "t" }),
  );
  check(
    "/api/v1/operations/{operationId}/complete",
    "post",
    200,
    await agent.complete("doc-1", { outcome: "succeeded", effect: { providerOperationId: "x" } }),
  );
  check(
    "/api/v1/gate",
    "post",
    200,
    await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: 1, operationId: "doc-1", tool: "t" }),
  );
  const { status: s3, ...reg } = await agent.registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: 1,
    operationId: "doc-2",
    kind: "queued",
    tool: "t",
  });
  check("/api/v1/operations", "post", 201, reg);
  check("/api/v1/operations/{operationId}/admit", "post", 200, await agent.admit("doc-2"));
  check("/api/v1/operations/{operationId}/heartbeat", "post", 200, await agent.heartbeat("doc-2"));
  const op = w.client(w.a.keys.operator);
  check("/api/v1/runs/{runId}/pause", "post", 200, await op.pause(run.runId, "doc"));
  check("/api/v1/runs/{runId}/resume", "post", 200, await op.resume(run.runId, "doc"));
  check("/api/v1/runs/{runId}/breaker", "post", 200, await op.breaker(run.runId, "trip", "doc"));
  const err = await raw(w.server.url, "POST", "/api/v1/gate", { key: w.a.keys.agent, body: {} });
  check("/api/v1/gate", "post", 400, err.json);
  expect([status, s2, s3]).toEqual([201, 201, 201]);
});
