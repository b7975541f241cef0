// The embedded PostgreSQL of `npm start` runs detached (lib/platform/db/embedded.ts#spawnDetachedPostgres): in a
// session of its own, so a terminal's Ctrl-C does not reach it, and stopped when the process that
// started it ends — by stop(), and also when that process is SIGKILLed (no chance to clean up).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { startEmbeddedPostgres } from "../lib/platform/db/embedded";
import { freePort } from "./support/pg-local";

const ROOT = path.resolve(import.meta.dirname, "..");
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-detached-"));
chmodSync(dir, 0o755); // as root the server runs as the `postgres` OS user
const dataDir = path.join(dir, "pgdata");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
const sessionOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[3]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function until(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

test("detached: its own session; stopped when the starting process is SIGKILLed; stop() stops it", async () => {
  const port = await freePort();
  const script = path.join(dir, "start.mts"); // outside the package: .mts is an ES module
  writeFileSync(
    script,
    `import { startEmbeddedPostgres } from ${JSON.stringify(path.join(ROOT, "lib/platform/db/embedded.ts"))};\n` +
      `const s = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, detached: true });\n` +
      `console.log("ready " + s.owned);\nsetInterval(() => {}, 1000);\n`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  expect((await until(() => out.includes("ready") || child.exitCode !== null, 120_000)) && out.includes("ready"), out).toBe(true);
  expect(out).toContain("ready true");
  expect(await listening(port)).toBe(true);
  const postmaster = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  expect(alive(postmaster)).toBe(true);
  expect(sessionOf(postmaster)).not.toBe(sessionOf(child.pid!));

  child.kill("SIGKILL");
  expect(await until(() => !alive(postmaster), 15_000)).toBe(true);
  expect(await listening(port)).toBe(false);

  // Started in this process: stop() stops it, and it is the same data folder (no second initdb).
  const again = await startEmbeddedPostgres({ dataDir, port, detached: true });
  expect(again.owned).toBe(true);
  expect(await listening(port)).toBe(true);
  await again.stop();
  expect(await listening(port)).toBe(false);
}, 180_000);
