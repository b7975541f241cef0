// The signing-key folder is private; the folders created on the way to it are not (keystore.ts ensureDir).
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { ensureSigningKey } from "./keystore";

const root = mkdtempSync(path.join(tmpdir(), "quiesce-keystore-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("the first key creates its folder 0700 and leaves the data folder above it as any new folder", () => {
  const dataDir = path.join(root, "data");
  ensureSigningKey(path.join(dataDir, "signing"));
  // A folder made the ordinary way, under the same umask: what the data folder must look like, so the
  // embedded PostgreSQL's OS user can still reach dataDir/pgdata.
  const ordinary = path.join(root, "ordinary");
  mkdirSync(ordinary);
  expect(statSync(path.join(dataDir, "signing")).mode & 0o777).toBe(0o700);
  expect(statSync(dataDir).mode & 0o777).toBe(statSync(ordinary).mode & 0o777);
});
