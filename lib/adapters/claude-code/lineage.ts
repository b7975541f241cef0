// Where a resumed or forked Claude Code session came from. `claude --resume <id> --fork-session` (and
// some resumes) start a NEW session id whose transcript begins with the source session's entries,
// which still carry the source's `sessionId`; newer versions may also write `forkedFrom.sessionId`.
// The last foreign session id in file order is the immediate source. Reading is bounded and cheap
// (no JSON parse per line): it only runs when the hook has no cached run for the session.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const MAX_BYTES = 64 * 1024 * 1024;
const SESSION_ID = /"sessionId"\s*:\s*"([^"\\]{1,300})"/g;

export interface TranscriptLineage {
  /** The transcript could be read and had entries. */
  readable: boolean;
  /** The session this one was resumed or forked from, if the transcript shows one. */
  sourceSessionId?: string;
}

export function transcriptLineage(transcriptPath: string | undefined, sessionId: string): TranscriptLineage {
  if (!transcriptPath) return { readable: false };
  let fd: number;
  try {
    fd = openSync(transcriptPath, "r");
  } catch {
    return { readable: false };
  }
  try {
    const size = Math.min(fstatSync(fd).size, MAX_BYTES);
    if (size === 0) return { readable: false };
    const buf = Buffer.alloc(size);
    readSync(fd, buf, 0, size, 0);
    let source: string | undefined;
    for (const m of buf.toString("utf8").matchAll(SESSION_ID)) {
      if (m[1] !== sessionId) source = m[1];
    }
    return { readable: true, ...(source ? { sourceSessionId: source } : {}) };
  } catch {
    return { readable: false };
  } finally {
    closeSync(fd);
  }
}
