// One set of lease defaults: the code (lib/control/lease.ts), the zod schema that builds the OpenAPI
// document, the database default, docs/adapters.md's table, and every doc line that mentions lease
// lengths must agree. Change a constant and this fails until the docs say the same.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import {
  DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
  DEFAULT_LEASE_TTL_SECONDS,
  MAX_LEASE_MAX_LIFETIME_SECONDS,
  MAX_LEASE_TTL_SECONDS,
  MIN_LEASE_MAX_LIFETIME_SECONDS,
} from "../../lib/control/lease";
import { buildOpenApiDocument } from "../../lib/schemas/openapi";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (f: string) => readFileSync(path.join(ROOT, f), "utf8");

/** "86400 s (24 h)" style: seconds, then a human form. */
function human(s: number): string {
  if (s % 86400 === 0 && s >= 2 * 86400) return `${s / 86400} days`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  return `${s} s`;
}

test("docs/adapters.md's table states the code's defaults and ranges", () => {
  const doc = read("docs/adapters.md");
  const table = doc.slice(doc.indexOf("<!-- lease-defaults"), doc.indexOf("<!-- /lease-defaults -->"));
  const rows = table.split("\n").filter((l) => l.startsWith("| `") || l.startsWith("| team"));
  expect(rows).toHaveLength(2);
  const [ttl, lifetime] = rows as [string, string];
  expect(ttl).toContain(`| ${DEFAULT_LEASE_TTL_SECONDS} s (${human(DEFAULT_LEASE_TTL_SECONDS)}) |`);
  expect(ttl).toContain(`| 1 … ${MAX_LEASE_TTL_SECONDS} s (${human(MAX_LEASE_TTL_SECONDS)}) |`);
  expect(lifetime).toContain(`| ${DEFAULT_LEASE_MAX_LIFETIME_SECONDS} s (${human(DEFAULT_LEASE_MAX_LIFETIME_SECONDS)}) |`);
  expect(lifetime).toContain(
    `| ${MIN_LEASE_MAX_LIFETIME_SECONDS} … ${MAX_LEASE_MAX_LIFETIME_SECONDS} s (${human(MAX_LEASE_MAX_LIFETIME_SECONDS)}) |`,
  );
});

test("the OpenAPI document publishes the same range and default", () => {
  const doc = buildOpenApiDocument() as any;
  const prop = doc.components.schemas.CreateRunRequest.properties.leaseTtlSeconds;
  expect(prop.minimum).toBe(1);
  expect(prop.maximum).toBe(MAX_LEASE_TTL_SECONDS);
  expect(prop.description).toContain(`default ${DEFAULT_LEASE_TTL_SECONDS}`);
});

test("the database defaults and check agree with the code", () => {
  const schema = read("prisma/schema.prisma");
  expect(schema).toMatch(new RegExp(`leaseMaxLifetimeSeconds\\s+Int\\s+@default\\(${DEFAULT_LEASE_MAX_LIFETIME_SECONDS}\\)`));
  expect(schema).toMatch(new RegExp(`ttlSeconds\\s+Int\\s+@default\\(${DEFAULT_LEASE_TTL_SECONDS}\\)`));
  const migrations = readdirSync(path.join(ROOT, "prisma/migrations"))
    .sort()
    .map((d) => {
      const f = path.join(ROOT, "prisma/migrations", d, "migration.sql");
      return statSync(path.dirname(f)).isDirectory() ? readFileSync(f, "utf8") : "";
    })
    .join("\n");
  const checks = [...migrations.matchAll(/"lease_max_lifetime_seconds" BETWEEN (\d+) AND (\d+)/g)];
  expect(checks.at(-1)?.slice(1).map(Number)).toEqual([MIN_LEASE_MAX_LIFETIME_SECONDS, MAX_LEASE_MAX_LIFETIME_SECONDS]);
});

/** Every markdown file a reader may open: README.md and docs/**. */
function markdownFiles(): string[] {
  const out = ["README.md"];
  const walk = (d: string) => {
    for (const n of readdirSync(path.join(ROOT, d))) {
      const rel = path.join(d, n);
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (n.endsWith(".md")) out.push(rel);
    }
  };
  walk("docs");
  return out;
}

test("no doc line about lease lengths names a duration the code does not use", () => {
  const allowed = new Set([
    DEFAULT_LEASE_TTL_SECONDS,
    MAX_LEASE_TTL_SECONDS,
    DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
    MAX_LEASE_MAX_LIFETIME_SECONDS,
    MIN_LEASE_MAX_LIFETIME_SECONDS,
    1,
  ]);
  const unit: Record<string, number> = { s: 1, second: 1, seconds: 1, h: 3600, hour: 3600, hours: 3600, day: 86400, days: 86400 };
  const words: Record<string, number> = { one: 1, a: 1 };
  const bad: string[] = [];
  for (const f of markdownFiles()) {
    read(f)
      .split("\n")
      .forEach((line, i) => {
        if (!/leaseTtlSeconds|QUIESCE_LEASE_TTL_SECONDS|lease_max_lifetime|maximum lifetime|idle window/.test(line)) return;
        for (const m of line.matchAll(/\b(\d+|one|a)\s*(seconds?|s|hours?|h|days?)\b/g)) {
          const n = words[m[1]!] ?? Number(m[1]);
          const secs = n * unit[m[2]!]!;
          if (!allowed.has(secs)) bad.push(`${f}:${i + 1}: "${m[0]}"`);
        }
      });
  }
  expect(bad).toEqual([]);
});
