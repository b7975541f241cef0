// The executor-side receipt (docs/ideas.md#five-questions, the approved-artifact handoff fixture): before a job runs, the
// worker writes "started"; when the handler's side effect lands it records the effect; when the
// control plane has the report it writes "reported". If the report is lost in transport, a retry of
// the same operationId finds the effect here and reports it instead of performing it again.
// Bounded duplicate prevention: it covers effects the handler recorded, nothing more.
import { mkdir, readFile, rename, writeFile, open } from "node:fs/promises";
import path from "node:path";

export interface JournalEffect {
  providerOperationId: string;
  detail?: unknown;
  committedAt?: string;
  rollbackOwner?: string;
}

export interface JournalEntry {
  operationId: string;
  state: "started" | "effect_recorded" | "uncertain" | "reported";
  effect?: JournalEffect;
  /** The report the control plane has not acknowledged (sent again by a retry). */
  report?: { outcome: "succeeded" | "failed" | "aborted_unknown"; effect?: JournalEffect; detail?: unknown };
  /** Why the outcome is not known to the control plane (transport_lost, …) and since when. */
  uncertain?: { cause: string; since: string };
  updatedAt: string;
}

export interface ExecutorJournal {
  get(operationId: string): Promise<JournalEntry | null>;
  put(entry: JournalEntry): Promise<void>;
}

/** One JSON file per operation, written to a temp file, fsynced, then renamed (atomic on POSIX). */
export function fileJournal(dir: string): ExecutorJournal {
  const file = (op: string) => path.join(dir, `${encodeURIComponent(op)}.json`);
  let made: Promise<unknown> | null = null;
  return {
    async get(operationId) {
      try {
        return JSON.parse(await readFile(file(operationId), "utf8")) as JournalEntry;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw err;
      }
    },
    async put(entry) {
      made ??= mkdir(dir, { recursive: true });
      await made;
      const target = file(entry.operationId);
      const tmp = `${target}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(entry));
      const fh = await open(tmp, "r");
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, target);
    },
  };
}

/** For tests and single-process tools: the same contract, kept in memory. */
export function memoryJournal(): ExecutorJournal & { entries: Map<string, JournalEntry> } {
  const entries = new Map<string, JournalEntry>();
  return {
    entries,
    async get(op) {
      return entries.get(op) ?? null;
    },
    async put(e) {
      entries.set(e.operationId, structuredClone(e));
    },
  };
}
