// `quiesce hook claude-code`: one hook invocation. Reads the hook JSON on stdin, answers on stdout,
// and returns the exit code. Fail closed: malformed input, a missing key, an unreachable or slow
// control plane, or any bug → exit 2 with a message on stderr (Claude Code blocks a PreToolUse call
// on exit 2; a crash or its own timeout would let the call through). The whole invocation runs under
// its own deadline, QUIESCE_HOOK_TIMEOUT_MS (default 3000), well inside Claude Code's hook timeout.
import { createHash } from "node:crypto";
import { read } from "node:fs";
import type { Readable } from "node:stream";
import { adapterConfig } from "../common/config";
import { describeError, makeClient } from "../common/control";
import { nodeFetch } from "../common/node-fetch";
import { handleHookEvent, type HookResult } from "./handle";
import { parseHookInput } from "./input";
import { defaultStateDir, SessionStore } from "./state";
import { setting } from "../../../platform/config";

export const DEFAULT_HOOK_TIMEOUT_MS = 3000;
const MAX_STDIN_BYTES = 4 * 1024 * 1024;

/**
 * Reads a file descriptor (the hook's stdin, fd 0) to its end with fs.read: no stream machinery is
 * loaded, which a fresh process per tool call would pay for. Asynchronous on purpose: a stdin that
 * never closes must not block the event loop, or the hook's own deadline could not fire. A
 * descriptor that cannot be read this way (EAGAIN on a non-blocking pipe, ESPIPE…) is read as a
 * stream instead.
 */
function readFd(fd: number, fallback: () => Readable): Promise<string> {
  const buf = Buffer.allocUnsafe(MAX_STDIN_BYTES + 1); // only the part read is ever looked at
  return new Promise((resolve, reject) => {
    const step = (off: number) =>
      read(fd, buf, off, buf.length - off, null, (err, n) => {
        if (err) {
          if (off === 0 && (err.code === "EAGAIN" || err.code === "ESPIPE" || err.code === "EISDIR")) return resolve(readAll(fallback()));
          return reject(err);
        }
        if (n === 0) return resolve(buf.toString("utf8", 0, off));
        if (off + n > MAX_STDIN_BYTES) return reject(new Error(`stdin larger than ${MAX_STDIN_BYTES} bytes`));
        step(off + n);
      });
    step(0);
  });
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_STDIN_BYTES) throw new Error(`stdin larger than ${MAX_STDIN_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** `stdin`: a stream, or a file descriptor (the bundled hook passes 0: see readFd). */
export async function runClaudeCodeHook(
  stdin: Readable | number,
  env: NodeJS.ProcessEnv = process.env,
  opts: { managed?: string } = {},
): Promise<HookResult> {
  let timeoutMs = DEFAULT_HOOK_TIMEOUT_MS;
  try {
    timeoutMs = setting("QUIESCE_HOOK_TIMEOUT_MS", env);
  } catch (err) {
    return fail(err);
  }
  let timer: NodeJS.Timeout | undefined;
  let expire!: () => void;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(expire, ms);
  };
  const deadline = new Promise<HookResult>((resolve) => {
    expire = () => resolve({ exitCode: 2, stderr: `quiesce hook: no decision within ${timeoutMs} ms (QUIESCE_HOOK_TIMEOUT_MS); blocking` });
    arm(timeoutMs);
  });
  const work = (async (): Promise<HookResult> => {
    const text = typeof stdin === "number" ? await readFd(stdin, () => process.stdin) : await readAll(stdin);
    const input = parseHookInput(text);
    const cfg = adapterConfig({ managed: opts.managed }, env);
    const store = new SessionStore(defaultStateDir(env), `${cfg.url}\n${createHash("sha256").update(cfg.apiKey).digest("hex")}`);
    const leaseTtl = setting("QUIESCE_LEASE_TTL_SECONDS", env);
    return handleHookEvent(
      {
        // One request per process: node:http answers it without loading undici (see node-fetch.ts);
        // only a wait for an approval opens the event stream, a response read as it arrives.
        client: makeClient(cfg, timeoutMs, { fetch: nodeFetch, streamFetch: globalThis.fetch }),
        store,
        taskId: setting("QUIESCE_TASK_ID", env),
        leaseTtlSeconds: leaseTtl,
        approvalWaitMs: setting("QUIESCE_HOOK_APPROVAL_WAIT_MS", env),
        approvalTimeout: setting("QUIESCE_HOOK_APPROVAL_TIMEOUT", env),
        notice: (line) => process.stderr.write(`${line}\n`),
        // The wait starts after the gate's first answer: the deadline becomes the wait plus one more answer.
        extendDeadline: (ms) => arm(ms + timeoutMs),
      },
      input,
    );
  })().catch(fail);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function fail(err: unknown): HookResult {
  return { exitCode: 2, stderr: `quiesce hook: ${describeError(err)}; blocking (fail closed)` };
}

/**
 * `npm run quiesce -- hook …` (without --silent) prints npm's banner on stdout before our JSON, and
 * Claude Code would not parse it — a deny would read as allow. Detected from npm's own environment;
 * then every refusal is answered with the other documented blocking form: exit 2 + reason on stderr.
 * Only OUR script counts: npm's variables are inherited by every descendant of any `npm run`.
 */
export function stdoutPolluted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event === "quiesce" && env.npm_config_loglevel !== "silent";
}

/** Writes the result to the process streams and returns the exit code. */
export function emit(result: HookResult, env: NodeJS.ProcessEnv = process.env): number {
  if (result.stdout && stdoutPolluted(env)) {
    const o = result.stdout as { hookSpecificOutput?: { permissionDecisionReason?: string }; stopReason?: string };
    const why = [o.hookSpecificOutput?.permissionDecisionReason, o.stopReason].filter(Boolean).join(" ");
    process.stderr.write(
      `${why || "Quiesce: blocked"} (npm printed its banner on stdout; use \`npm run --silent\` or bin/quiesce-hook.mjs for the JSON answer)\n`,
    );
    return 2;
  }
  if (result.stdout) process.stdout.write(`${JSON.stringify(result.stdout)}\n`);
  if (result.stderr) process.stderr.write(`${result.stderr}\n`);
  return result.exitCode;
}
