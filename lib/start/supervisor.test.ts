// Real child processes: output is prefixed per child, a crash is reported (and not restarted), and
// stopAll ends everything, escalating to SIGKILL for a child that ignores SIGTERM.
import { expect, test } from "vitest";
import { Supervisor } from "./supervisor";

const node = process.execPath;

test("prefixes each child's lines, reports an unexpected exit once, and stops the rest", async () => {
  const out: string[] = [];
  const err: string[] = [];
  const crashes: [string, number | null][] = [];
  const sup = new Supervisor({
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    onUnexpectedExit: (n, c) => crashes.push([n, c]),
    graceMs: 20_000,
  });
  const crasher = sup.spawn(
    "crasher",
    node,
    ["-e", "console.log('one'); console.error('boom'); process.exit(3)"],
    process.env,
    process.cwd(),
  );
  const steady = sup.spawn("steady", node, ["-e", "console.log('up'); setInterval(() => {}, 1000)"], process.env, process.cwd());
  expect(await crasher.exited).toEqual({ code: 3, signal: null });
  // onUnexpectedExit is chained on `exited` before the test awaits it, so it has run by now.
  expect(crashes).toEqual([["crasher", 3]]);
  expect(out.some((l) => /^\[crasher\]\s+one$/.test(l))).toBe(true);
  expect(err.some((l) => /^\[crasher\]\s+boom$/.test(l))).toBe(true);
  expect(steady.child.exitCode).toBeNull(); // the others keep running; nothing restarted the crasher
  expect(sup.list()).toHaveLength(2);

  await sup.stopAll();
  expect(await steady.exited).toEqual({ code: null, signal: "SIGTERM" });
  expect(crashes).toHaveLength(1); // a stop is not a crash
});

test("a child that ignores SIGTERM is killed after the grace period", async () => {
  const err: string[] = [];
  const sup = new Supervisor({ out: () => {}, err: (l) => err.push(l), graceMs: 300 });
  const stubborn = sup.spawn(
    "stubborn",
    node,
    ["-e", "process.on('SIGTERM', () => console.log('ignoring')); console.log('ready'); setInterval(() => {}, 1000)"],
    process.env,
    process.cwd(),
  );
  // Wait until it has installed its handler.
  await new Promise<void>((resolve) => stubborn.child.stdout!.once("data", () => resolve()));
  await sup.stopAll();
  expect(await stubborn.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(err.join("\n")).toMatch(/stubborn\] did not stop within 300 ms; killing it/);
});
