import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { checkBuild } from "./build-check";

const root = mkdtempSync(path.join(tmpdir(), "quiesce-build-check-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const at = (file: string, seconds: number) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), "x");
  const t = new Date(seconds * 1000);
  utimesSync(path.join(root, file), t, t);
};

test("builds when there is no build, or a source or the lock file is newer than it; not otherwise", () => {
  at("app/page.tsx", 1000);
  at("lib/control/gate.ts", 1000);
  at("package-lock.json", 1000);
  expect(checkBuild(root)).toMatchObject({ needed: true, reason: expect.stringMatching(/BUILD_ID is missing/) });

  at(".next/BUILD_ID", 2000);
  expect(checkBuild(root).needed).toBe(false);

  // Tests, generated code and anything under .next or node_modules do not count.
  at("lib/control/gate.test.ts", 3000);
  at("lib/generated/prisma/client.ts", 3000);
  at("node_modules/x/index.js", 3000);
  expect(checkBuild(root).needed).toBe(false);

  at("components/run-tree.tsx", 3000);
  expect(checkBuild(root)).toEqual({ needed: true, reason: "components/run-tree.tsx changed after the last build" });
  at(".next/BUILD_ID", 4000);
  at("package-lock.json", 5000);
  expect(checkBuild(root)).toEqual({ needed: true, reason: "package-lock.json changed after the last build" });
  at(".next/BUILD_ID", 6000);
  at("prisma/schema.prisma", 7000);
  expect(checkBuild(root).reason).toBe("prisma/schema.prisma changed after the last build");
});
