// Where a resumed or forked Claude Code session came from. `claude --resume <id> --fork-session`
// starts a NEW session id (SessionStart `source: "fork"`) whose transcript begins with copies of the
// source session's entries. Older versions keep the source's `sessionId` on the copies; 2.1.x rewrites
// it but keeps each entry's `uuid`. So: a foreign sessionId names the source directly; otherwise, for a
// fork, the source is the sibling transcript (same project directory) that shares the most of this
// transcript's entry uuids (ties: the oldest session — a sibling fork of the same source shares only
// the common prefix, the parent shares everything that was copied). Reading is bounded and cheap (no
// JSON parse per line) and only runs when the hook has no cached run for the session.
import { closeSync, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";

const MAX_BYTES = 64 * 1024 * 1024;
const MAX_SIBLINGS = 500;
const SESSION_ID = /"sessionId"\s*:\s*"([^"\\]{1,300})"/g;
const UUID = /"uuid"\s*:\s*"([0-9a-fA-F-]{8,64})"/g;
const FIRST_TS = /"timestamp"\s*:\s*"([^"]{10,40})"/;

export interface TranscriptLineage {
  /** The transcript could be read and had entries. */
  readable: boolean;
  /** The session this one was resumed or forked from, if the transcript shows one. */
  sourceSessionId?: string;
}

function readBounded(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const size = Math.min(fstatSync(fd).size, MAX_BYTES);
    if (size === 0) return null;
    const buf = Buffer.alloc(size);
    readSync(fd, buf, 0, size, 0);
    return buf.toString("utf8");
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

export function transcriptLineage(transcriptPath: string | undefined, sessionId: string, opts: { fork?: boolean } = {}): TranscriptLineage {
  if (!transcriptPath) return { readable: false };
  const text = readBounded(transcriptPath);
  if (text === null) return { readable: false };
  let source: string | undefined;
  for (const m of text.matchAll(SESSION_ID)) if (m[1] !== sessionId) source = m[1];
  if (source || !opts.fork) return { readable: true, ...(source ? { sourceSessionId: source } : {}) };

  const own = new Set([...text.matchAll(UUID)].map((m) => m[1]!));
  const first = own.values().next().value as string | undefined;
  if (!first) return { readable: true };
  const dir = path.dirname(transcriptPath);
  let best: { id: string; shared: number; ts: string } | undefined;
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".jsonl") && n !== path.basename(transcriptPath))
      .slice(0, MAX_SIBLINGS);
  } catch {
    return { readable: true };
  }
  for (const n of names) {
    const t = readBounded(path.join(dir, n));
    if (!t || !t.includes(first)) continue;
    let shared = 0;
    for (const m of t.matchAll(UUID)) if (own.has(m[1]!)) shared++;
    const ts = FIRST_TS.exec(t)?.[1] ?? "";
    if (!best || shared > best.shared || (shared === best.shared && ts < best.ts)) best = { id: n.slice(0, -".jsonl".length), shared, ts };
  }
  return { readable: true, ...(best ? { sourceSessionId: best.id } : {}) };
}
