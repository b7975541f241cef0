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
    JSON.stringify({ name: "probe", dependencies: { pg: "*", zod: "*", next: "*" }, devDependencies: { "fast-check": "*" } }),
  );
  write("lib/platform/db/prisma.ts", "export const prisma = 1;\n");
  write("lib/modules/runs/internal/helper.ts", "export const h = 1;\n");
  write(
    "lib/modules/runs/ok.ts",
    'import { h } from "./internal/helper";\nimport { prisma } from "../../platform/db/prisma";\nexport const ok = h + prisma;\n',
  );
  write("lib/modules/runs/index.ts", 'export { ok } from "./ok";\n');
  write(
    "lib/control/impure.ts",
    'import fs from "node:fs";\nimport { prisma } from "../platform/db/prisma";\nexport const x = [fs, prisma];\n',
  );
  write("lib/api/sneaky.ts", 'import { prisma } from "../platform/db/prisma";\nimport pg from "pg";\nexport const y = [prisma, pg];\n');
  write("lib/api/thing.ts", "export const t = 1;\n");
  write("app/page.ts", 'import { h } from "../lib/modules/runs/internal/helper";\nexport const z = h;\n');
  write("app/fine.ts", 'import { ok } from "../lib/modules/runs";\nexport const f = ok;\n');
  write("components/direct.ts", 'import { ok } from "../lib/modules/runs/ok";\nexport const d = ok;\n');
  write(
    "lib/modules/stop/peek.ts",
    'import { h } from "../runs/internal/helper";\nimport { ok } from "../runs/ok";\nexport const p = h + ok;\n',
  );
  write("lib/modules/stop/upward.ts", 'import { t } from "../../api/thing";\nexport const u = t;\n');
  write("lib/modules/stop/request.ts", 'import { cookies } from "next/headers";\nexport const r = cookies;\n');
  write("lib/modules/sessions/request.ts", 'import { cookies } from "next/headers";\nexport const r = cookies;\n');
  write("lib/platform/up.ts", 'import { ok } from "../modules/runs/ok";\nexport const v = ok;\n');
  write("lib/agent/sdk.ts", 'import { ok } from "../modules/runs/ok";\nexport const w = ok;\n');
  write("lib/cli/uses-bin.ts", 'import { b } from "../../bin/thing";\nexport const c = b;\n');
  write("bin/thing.ts", "export const b = 1;\n");
  write("lib/a.ts", 'import { b } from "./b";\nexport const a = () => b;\n');
  write("lib/b.ts", 'import { a } from "./a";\nexport const b = () => a;\n');
  write("lib/dev.ts", 'import fc from "fast-check";\nimport "thread-stream";\nexport const d = fc;\n');

  const { tsConfig: _ts, ...options } = config.options;
  const result = await cruise(["lib", "app", "components", "bin"], {
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
      "agent-side-imports-no-server-code: lib/agent/sdk.ts -> lib/modules/runs/ok.ts",
      "control-is-pure: lib/control/impure.ts -> lib/platform/db/prisma.ts",
      "control-no-io-core-modules: lib/control/impure.ts -> fs",
      "database-only-in-modules: lib/api/sneaky.ts -> lib/platform/db/prisma.ts",
      "database-only-in-modules: lib/api/sneaky.ts -> pg",
      "database-only-in-modules: lib/control/impure.ts -> lib/platform/db/prisma.ts",
      "declared-dependencies-only: lib/dev.ts -> thread-stream",
      "edges-enter-a-module-by-its-index: app/page.ts -> lib/modules/runs/internal/helper.ts",
      "edges-enter-a-module-by-its-index: components/direct.ts -> lib/modules/runs/ok.ts",
      "lib-never-imports-bin: lib/cli/uses-bin.ts -> bin/thing.ts",
      "module-internals-not-outside-modules: app/page.ts -> lib/modules/runs/internal/helper.ts",
      "module-internals-stay-in-their-module: lib/modules/stop/peek.ts -> lib/modules/runs/internal/helper.ts",
      "modules-are-below-the-edges: lib/modules/stop/upward.ts -> lib/api/thing.ts",
      "no-circular: lib/a.ts -> lib/b.ts",
      "platform-is-the-floor: lib/platform/up.ts -> lib/modules/runs/ok.ts",
      "request-scope-only-in-sessions: lib/modules/stop/request.ts -> next",
      "shipped-code-uses-runtime-dependencies: lib/dev.ts -> fast-check",
      "ui-reaches-data-through-modules: app/page.ts -> lib/modules/runs/internal/helper.ts",
    ].sort(),
  );
});

// Transaction-level helpers (`…Tx(tx, …)`) do not authorize: modules may hand them to each other inside
// one transaction, but a module's public entry (its index.ts, all the edges may import) exports none.
test("module entries export no transaction-level (…Tx) helpers", () => {
  const modules = path.join(ROOT, "lib/modules");
  const entries = readdirSync(modules).map((m) => path.join(modules, m, "index.ts"));
  expect(entries.length).toBeGreaterThanOrEqual(7);
  const exported = entries.flatMap((f) => {
    const text = readFileSync(f, "utf8");
    const direct = [...text.matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let)\s+(\w+)/gm)].map((m) => m[1]!);
    const listed = [...text.matchAll(/^export\s*(?:type\s*)?\{([^}]*)\}/gm)].flatMap((m) =>
      m[1]!.split(",").map((s) =>
        s
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .pop()!,
      ),
    );
    return [...direct, ...listed].filter((n) => /Tx$/.test(n)).map((n) => `${path.relative(ROOT, f)}: ${n}`);
  });
  expect(exported).toEqual([]);
});
