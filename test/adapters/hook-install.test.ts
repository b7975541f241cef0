// The installed hook as a fleet would run it: `quiesce hook install` builds ONE JavaScript file and the
// settings; the file runs from a directory with no node_modules (no tsx at run time) against the real
// API; the documented command form blocks (exit 2) when node or the file is missing; the checked-in
// example settings are exactly what the installer writes; managed configuration beats the user's shell.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { CLAUDE_LAUNCHER, hookCommand, hookSettings, HOOK_EVENTS, HOOK_FILE } from "../../lib/cli/hook-install";
import { makeKey, makeTeam } from "../support/fixtures";
import { makeWorld, ROOT, runProcess, tempDir, TSX, type World } from "./support";

let w: World;
let dir: string;
let hookPath: string;
beforeAll(async () => {
  w = await makeWorld();
  dir = tempDir("hook-install");
  writeFileSync(
    path.join(dir, "settings.json"),
    JSON.stringify({
      model: "keep-me",
      hooks: {
        Stop: [{ hooks: [{ type: "command", command: "true" }] }],
        // An earlier install (the ESM file name): replaced, never left to run beside the new hook.
        PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "node /old/quiesce-hook.mjs claude-code || exit 2" }] }],
      },
    }),
  );
  const r = await runProcess(
    TSX,
    [
      "--conditions=react-server",
      "bin/quiesce.ts",
      "hook",
      "install",
      "--dir",
      path.join(dir, "opt"),
      "--settings",
      path.join(dir, "settings.json"),
      "--url",
      "https://quiesce.example",
      "--key-file",
      "/etc/quiesce/agent.key",
    ],
    "",
    process.env,
  );
  expect(r.code, r.stderr).toBe(0);
  // Move the bundle somewhere with no node_modules anywhere above it but /tmp.
  mkdirSync(path.join(dir, "elsewhere"));
  hookPath = path.join(dir, "elsewhere", HOOK_FILE);
  copyFileSync(path.join(dir, "opt", HOOK_FILE), hookPath);
}, 120_000);
afterAll(async () => {
  await w?.api.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

const sh = (command: string, input: string, env: NodeJS.ProcessEnv) => runProcess("/bin/sh", ["-c", command], input, env);
const baseEnv = (over: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  NODE_ENV: "test",
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dir,
  QUIESCE_URL: w.api.url,
  QUIESCE_API_KEY: w.agentKey,
  QUIESCE_HOOK_STATE_DIR: path.join(dir, "state"),
  QUIESCE_HOOK_TIMEOUT_MS: "30000",
  ...over,
});
const common = (session_id: string) => ({ session_id, transcript_path: `/tmp/${session_id}.jsonl`, cwd: "/work/demo" });
let seq = 0;
const sid = () => `inst-${process.pid}-${++seq}-${Date.now().toString(36)}`;

describe("quiesce hook install", () => {
  test("writes the bundle and settings in the documented fail-closed form", () => {
    const settings = JSON.parse(readFileSync(path.join(dir, "settings.json"), "utf8"));
    const expected = hookCommand(path.join(dir, "opt", HOOK_FILE));
    expect(expected.endsWith(" || exit 2")).toBe(true);
    expect(Object.keys(settings.hooks).sort()).toEqual([...HOOK_EVENTS, "Stop"].sort());
    for (const e of HOOK_EVENTS) expect(settings.hooks[e][0].hooks[0].command).toBe(expected);
    expect(settings.hooks.PreToolUse).toHaveLength(1);
    // Existing settings are kept; the env block says where the control plane and the key are.
    expect(settings.model).toBe("keep-me");
    expect(settings.hooks.Stop).toEqual([{ hooks: [{ type: "command", command: "true" }] }]);
    expect(settings.env).toEqual({ QUIESCE_URL: "https://quiesce.example", QUIESCE_API_KEY_FILE: "/etc/quiesce/agent.key" });
    // The bundle is self-contained: it imports or requires nothing but node's built-ins.
    const js = readFileSync(hookPath, "utf8");
    const specifiers = [...js.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((x) => !isBuiltin(x))).toEqual([]);
    expect(js).not.toContain("tsx");
  });

  test("the bundle, run from outside the repository, gates real calls (allow, then kill → deny + stop)", async () => {
    const s = sid();
    const run = (input: unknown) => sh(hookCommand(hookPath), JSON.stringify(input), baseEnv());
    expect((await run({ ...common(s), hook_event_name: "SessionStart", source: "startup" })).code).toBe(0);
    const row = await prisma().run.findFirstOrThrow({ where: { teamId: w.teamId, nativeSessionId: s } });
    const pre = await run({ ...common(s), hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {}, tool_use_id: `toolu_${s}_1` });
    expect(pre).toMatchObject({ code: 0, stdout: "" });
    await w.operator.kill(row.id, "install test");
    const denied = await run({
      ...common(s),
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: {},
      tool_use_id: `toolu_${s}_2`,
    });
    expect(denied.code).toBe(0);
    const out = JSON.parse(denied.stdout);
    expect(out).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
  });

  test("the command form exits 2 when the file is missing or node is missing", async () => {
    const input = JSON.stringify({ ...common(sid()), hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {}, tool_use_id: "t" });
    const missingFile = await sh(hookCommand(path.join(dir, "nowhere", HOOK_FILE)), input, baseEnv());
    expect(missingFile.code).toBe(2);
    const noNode = await sh(hookCommand(hookPath), input, baseEnv({ PATH: path.join(dir, "empty-bin") }));
    expect(noNode.code).toBe(2);
    // Without the suffix the same failures would be 1 and 127: Claude Code would run the tool.
    expect((await sh(hookCommand(hookPath).replace(" || exit 2", ""), input, baseEnv({ PATH: path.join(dir, "empty-bin") }))).code).toBe(
      127,
    );
  });
});

test("the launcher runs claude under `quiesce exec`: the session's one run, its id given to claude, the key kept in its file", async () => {
  const launcher = path.join(dir, "opt", CLAUDE_LAUNCHER);
  expect(statSync(launcher).mode & 0o111, "executable").not.toBe(0);
  expect(readFileSync(launcher, "utf8")).toContain("QUIESCE_URL:=https://quiesce.example");
  // A stand-in `claude`: records what it was given and leaves a background job behind.
  const bin = path.join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const seen = path.join(dir, "claude-saw");
  const sleeper = `sleep ${700 + (process.pid % 200)}`;
  writeFileSync(
    path.join(bin, "claude"),
    `#!/bin/sh\necho "$@" > ${seen}\necho "run=$QUIESCE_RUN_ID key=$QUIESCE_API_KEY" >> ${seen}\n${sleeper} &\nexit 0\n`,
    { mode: 0o755 },
  );
  const keyFile = path.join(dir, "agent.key");
  writeFileSync(keyFile, w.agentKey);
  const r = await runProcess(launcher, ["-p", "hello"], "", {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: path.join(dir, "state"),
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY_FILE: keyFile,
    QUIESCE_CLAUDE: path.join(bin, "claude"),
    NODE_ENV: "test",
  });
  expect(r.code, r.stderr).toBe(0);
  const [args, env] = readFileSync(seen, "utf8").trim().split("\n");
  const sessionId = /^--session-id (\S+) -p hello$/.exec(args!)?.[1];
  expect(sessionId, args).toBeDefined();
  const run = await prisma().run.findFirstOrThrow({ where: { nativeSessionId: sessionId } });
  expect(run).toMatchObject({ teamId: w.teamId, harness: "claude_code" });
  expect(env).toBe(`run=${run.id} key=`);
  // The command ended: what it left behind was stopped with it.
  const left = (await runProcess("pgrep", ["-fx", sleeper], "", process.env)).stdout.trim();
  expect(left).toBe("");
}, 60_000);

test("examples/claude-code/settings.json is what the installer writes for /opt/quiesce", () => {
  const example = JSON.parse(readFileSync(path.join(ROOT, "examples/claude-code/settings.json"), "utf8"));
  expect(example.hooks).toEqual(hookSettings(`/opt/quiesce/${HOOK_FILE}`));
  expect(Object.keys(example.env)).toContain("QUIESCE_API_KEY_FILE");
  expect(existsSync(path.join(ROOT, "lib/agent/adapters/claude-code/bundle-main.ts"))).toBe(true);
});

describe("managed configuration wins over the user's shell", () => {
  test("a managed key file beats QUIESCE_API_KEY (another team's key) unless the managed file allows it", async () => {
    const other = await makeTeam("Elsewhere");
    const otherKey = await makeKey(other.teamId, { kind: "agent" });
    const keyFile = path.join(dir, "managed.key");
    writeFileSync(keyFile, `${w.agentKey}\n`);
    const managed = path.join(dir, "managed.json");
    writeFileSync(managed, JSON.stringify({ url: w.api.url, apiKeyFile: keyFile }));
    const run = (s: string, over: Record<string, string>) =>
      sh(
        hookCommand(hookPath, { managed }),
        JSON.stringify({ ...common(s), hook_event_name: "SessionStart", source: "startup" }),
        baseEnv(over),
      );
    const s1 = sid();
    const r1 = await run(s1, { QUIESCE_API_KEY: otherKey.secret, QUIESCE_URL: "http://127.0.0.1:9" });
    expect(r1.code, r1.stderr).toBe(0);
    expect((await prisma().run.findFirstOrThrow({ where: { nativeSessionId: s1 } })).teamId).toBe(w.teamId);

    writeFileSync(managed, JSON.stringify({ url: w.api.url, apiKeyFile: keyFile, allowUserOverride: true }));
    const s2 = sid();
    expect((await run(s2, { QUIESCE_API_KEY: otherKey.secret })).code).toBe(0);
    expect((await prisma().run.findFirstOrThrow({ where: { nativeSessionId: s2 } })).teamId).toBe(other.teamId);

    // A broken managed file blocks; it is never read as "no policy".
    writeFileSync(managed, "{ not json");
    expect((await run(sid(), {})).code).toBe(2);
  });

  test("without a managed file, a key file beats a key in the environment", async () => {
    const other = await makeTeam("Shell");
    const otherKey = await makeKey(other.teamId, { kind: "agent" });
    const keyFile = path.join(dir, "agent.key");
    writeFileSync(keyFile, w.agentKey);
    const s = sid();
    const r = await sh(
      hookCommand(hookPath),
      JSON.stringify({ ...common(s), hook_event_name: "SessionStart" }),
      baseEnv({ QUIESCE_API_KEY: otherKey.secret, QUIESCE_API_KEY_FILE: keyFile }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await prisma().run.findFirstOrThrow({ where: { nativeSessionId: s } })).teamId).toBe(w.teamId);
  });
});
