// The import rules must fire: a probe tree in a temporary folder breaks each rule once, and
// dependency-cruiser (with the project's own .dependency-cruiser.cjs) must report exactly those.
// (A rule that can never match — e.g. because its target is excluded from the graph — fails here.)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { cruise } from "dependency-cruiser";

const ROOT = path.resolve(import.meta.dirname, "../..");
const config = createRequire(import.meta.url)(path.join(ROOT, ".dependency-cruiser.cjs"));
const dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-boundaries-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, text: string) {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

test("each boundary rule reports its breach, and only that", async () => {
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "probe", dependencies: { pg: "*", zod: "*" }, devDependencies: { "fast-check": "*" } }),
  );
  write("lib/platform/db/prisma.ts", "export const prisma = 1;\n");
  write("lib/dal/internal/helper.ts", "export const h = 1;\n");
  write("lib/dal/ok.ts", 'import { h } from "./internal/helper";\nimport { prisma } from "../db/prisma";\nexport const ok = h + prisma;\n');
  write("lib/control/impure.ts", 'import fs from "node:fs";\nimport { prisma } from "../db/prisma";\nexport const x = [fs, prisma];\n');
  write("lib/barrier/sneaky.ts", 'import { prisma } from "../db/prisma";\nimport pg from "pg";\nexport const y = [prisma, pg];\n');
  write("app/page.ts", 'import { h } from "../lib/dal/internal/helper";\nexport const z = h;\n');
  write("lib/cli/uses-bin.ts", 'import { b } from "../../bin/thing";\nexport const c = b;\n');
  write("bin/thing.ts", "export const b = 1;\n");
  write("lib/modules/stop/engine/engine.ts", "export const e = 1;\n");
  write("lib/dal/upward.ts", 'import { e } from "../barrier/engine";\nexport const u = e;\n');
  write("lib/a.ts", 'import { b } from "./b";\nexport const a = () => b;\n');
  write("lib/b.ts", 'import { a } from "./a";\nexport const b = () => a;\n');
  write("lib/dev.ts", 'import fc from "fast-check";\nimport "thread-stream";\nexport const d = fc;\n');

  const { tsConfig: _ts, ...options } = config.options;
  const result = await cruise(["lib", "app", "bin"], {
    ...options,
    preserveSymlinks: true,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
    baseDir: dir,
  });
  const output = result.output as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  const seen = output.summary.violations
    .map((v) => `${v.rule.name}: ${v.from} -> ${v.to.replace(/^(?:.*\/)?node_modules\/([^/]+).*/, "$1")}`)
    .sort();
  expect(seen).toEqual(
    [
      "control-is-pure: lib/control/impure.ts -> lib/platform/db/prisma.ts",
      "control-no-io-core-modules: lib/control/impure.ts -> fs",
      "database-only-in-dal-gate-db: lib/barrier/sneaky.ts -> lib/platform/db/prisma.ts",
      "database-only-in-dal-gate-db: lib/barrier/sneaky.ts -> pg",
      "database-only-in-dal-gate-db: lib/control/impure.ts -> lib/platform/db/prisma.ts",
      "dal-internal-stays-in-dal: app/page.ts -> lib/dal/internal/helper.ts",
      "dal-is-a-lower-layer: lib/dal/upward.ts -> lib/modules/stop/engine/engine.ts",
      "declared-dependencies-only: lib/dev.ts -> thread-stream",
      "lib-never-imports-bin: lib/cli/uses-bin.ts -> bin/thing.ts",
      "no-circular: lib/a.ts -> lib/b.ts",
      "shipped-code-uses-runtime-dependencies: lib/dev.ts -> fast-check",
      "ui-reaches-data-through-dal: app/page.ts -> lib/dal/internal/helper.ts",
    ].sort(),
  );
});

// Transaction-level helpers (`…Tx(tx, …)`) do not authorize: they live in lib/dal/internal, which the
// rule above keeps inside lib/dal (and lib/gate). A public dal module that exports one again fails here.
test("public dal modules export no transaction-level (…Tx) helpers", () => {
  const dal = path.join(ROOT, "lib/dal");
  const publicModules = [
    ...readdirSync(dal).map((n) => path.join(dal, n)),
    ...readdirSync(path.join(dal, "console")).map((n) => path.join(dal, "console", n)),
  ].filter((f) => /\.ts$/.test(f) && !/\.test\.ts$/.test(f));
  expect(publicModules.length).toBeGreaterThan(10);
  const offenders = publicModules.flatMap((f) =>
    [...readFileSync(f, "utf8").matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let)\s+(\w+Tx)\b/gm)].map(
      (m) => `${path.relative(ROOT, f)}: ${m[1]}`,
    ),
  );
  const reexports = publicModules.flatMap((f) =>
    [...readFileSync(f, "utf8").matchAll(/^export\s*\{([^}]*)\}/gm)]
      .flatMap((m) =>
        m[1]!.split(",").map((s) =>
          s
            .trim()
            .split(/\s+as\s+/)
            .pop()!,
        ),
      )
      .filter((n) => /Tx$/.test(n))
      .map((n) => `${path.relative(ROOT, f)}: ${n}`),
  );
  expect([...offenders, ...reexports]).toEqual([]);
});
