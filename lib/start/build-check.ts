// Whether `npm start` must run `next build` first: only when there is no build yet, or a source file
// (app, components, lib, public, configs, the lock file, the Prisma schema) changed since .next/BUILD_ID
// was written. Tests and the generated Prisma client do not count (the schema and lock file do).
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

export const SOURCE_DIRS = ["app", "components", "lib", "public", "styles"];
export const SOURCE_FILES = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "next.config.mjs",
  "next.config.ts",
  "next.config.js",
  "postcss.config.mjs",
  "postcss.config.js",
  "tailwind.config.ts",
  "prisma/schema.prisma",
  "middleware.ts",
  "proxy.ts",
];
const SKIP_DIRS = new Set(["node_modules", ".next", "generated", "__tests__"]);
const SKIP_FILE = /\.(test|spec)\.[cm]?[jt]sx?$/;

export interface BuildCheck {
  needed: boolean;
  reason: string;
}

function newest(dir: string, best: { file: string; mtimeMs: number }): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith(".")) newest(full, best);
    } else if (entry.isFile() && !SKIP_FILE.test(entry.name)) {
      const m = statSync(full).mtimeMs;
      if (m > best.mtimeMs) {
        best.file = full;
        best.mtimeMs = m;
      }
    }
  }
}

/** The newest source file under `root` (absolute path) and its mtime. */
export function newestSource(root: string): { file: string; mtimeMs: number } {
  const best = { file: "", mtimeMs: 0 };
  for (const d of SOURCE_DIRS) if (existsSync(path.join(root, d))) newest(path.join(root, d), best);
  for (const f of SOURCE_FILES) {
    const full = path.join(root, f);
    if (existsSync(full)) {
      const m = statSync(full).mtimeMs;
      if (m > best.mtimeMs) {
        best.file = full;
        best.mtimeMs = m;
      }
    }
  }
  return best;
}

export function checkBuild(root: string): BuildCheck {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return { needed: true, reason: "no production build yet (.next/BUILD_ID is missing)" };
  const built = statSync(buildId).mtimeMs;
  const src = newestSource(root);
  if (src.mtimeMs > built) {
    return { needed: true, reason: `${path.relative(root, src.file)} changed after the last build` };
  }
  return { needed: false, reason: "the build in .next is newer than every source file" };
}
