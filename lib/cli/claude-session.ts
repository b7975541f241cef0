// The session a `claude …` command runs, so that `quiesce exec -- claude …` and the Claude Code hook
// register one run for it (docs/environment.md): the hook registers by session id, so exec must know the
// id before claude starts — the one the command names, or one it gives the command (`--session-id`).
import { randomUUID } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The value of `--name <v>` / `--name=<v>` (or a short alias), if present. */
function valueOf(argv: readonly string[], names: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return undefined;
    if (names.includes(a)) return argv[i + 1];
    const eq = names.find((n) => n.startsWith("--") && a.startsWith(`${n}=`));
    if (eq) return a.slice(eq.length + 1);
  }
  return undefined;
}

const has = (argv: readonly string[], names: readonly string[]) => {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => names.includes(a) || names.some((n) => a.startsWith(`${n}=`)));
};

/**
 * claude's arguments (after the binary) → its session id and the arguments to run. A named session
 * (`--session-id`, or `--resume <id>` without `--fork-session`) is kept; a fresh or forked session gets
 * `--session-id <new uuid>`; `--continue` and a `--resume` without an id pick a session only claude knows
 * (null: exec then registers a run of its own).
 */
export function claudeSession(args: readonly string[], newId: () => string = randomUUID): { sessionId: string | null; args: string[] } {
  const named = valueOf(args, ["--session-id"]);
  if (named !== undefined) return { sessionId: named, args: [...args] };
  const fork = has(args, ["--fork-session"]);
  const resumed = valueOf(args, ["--resume", "-r"]);
  const resuming = has(args, ["--resume", "-r"]);
  const continuing = has(args, ["--continue", "-c"]);
  if (!fork) {
    if (resumed !== undefined && UUID.test(resumed)) return { sessionId: resumed, args: [...args] };
    if (resuming || continuing) return { sessionId: null, args: [...args] };
  }
  const id = newId();
  return { sessionId: id, args: ["--session-id", id, ...args] };
}
