// A child of `npm start` that loses its parent (npm start SIGKILLed) shuts itself down gracefully.
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, test } from "vitest";

const WATCHDOG = path.join(import.meta.dirname, "exit-with-parent.mjs");

test("an orphaned child sends itself SIGTERM and runs its own shutdown", async () => {
  const grandchild = `process.on('SIGTERM', () => { console.log('graceful stop'); process.exit(0); }); console.log('up'); setInterval(() => {}, 1000);`;
  const parent = `const c = require('child_process').spawn(process.execPath, ['--import', ${JSON.stringify(WATCHDOG)}, '-e', ${JSON.stringify(grandchild)}], { stdio: ['ignore', 'inherit', 'inherit'] }); setInterval(() => {}, 1000);`;
  const p = spawn(process.execPath, ["-e", parent], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const ended = new Promise<void>((r) => p.stdout.on("end", () => r())); // the grandchild holds the pipe until it exits
  await new Promise<void>((resolve) =>
    p.stdout.on("data", (d) => {
      out += d;
      if (out.includes("up")) resolve();
    }),
  );
  p.kill("SIGKILL");
  await ended;
  expect(out).toContain("graceful stop");
});
