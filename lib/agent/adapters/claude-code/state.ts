// Every hook invocation is a fresh process, so the session → run mapping lives in files: one per
// session and one per subagent (no two hook processes ever rewrite the same file with different
// content, and each write is atomic by rename). The file is a cache: when it is missing the hook
// re-registers with the same native ids, which the control plane answers idempotently with the
// existing run. Keyed by control-plane URL too, so pointing a fleet at another control plane never
// reuses run ids that plane does not know, and a new key (possibly of another team) starts afresh.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import * as z from "zod/mini";
import { setting } from "../../../platform/config";

export const Binding = z.object({
  runId: z.string().check(z.minLength(1)),
  leaseId: z.string().check(z.minLength(1)),
  epoch: z.int(),
});
export type Binding = z.infer<typeof Binding>;

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = setting("QUIESCE_HOOK_STATE_DIR", env);
  if (configured) return configured;
  const base = env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state");
  return path.join(base, "quiesce", "claude-code");
}

const h = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 32);

export class SessionStore {
  /** `scope`: the control plane URL and the key's hash — another plane or team never reuses a mapping. */
  constructor(
    private readonly dir: string,
    private readonly scope: string,
  ) {}

  private file(sessionId: string, agentId?: string): string {
    const session = h(`${this.scope}\n${sessionId}`);
    return path.join(this.dir, session, agentId ? `agent-${h(agentId)}.json` : "session.json");
  }

  read(sessionId: string, agentId?: string): Binding | null {
    let text: string;
    try {
      text = readFileSync(this.file(sessionId, agentId), "utf8");
    } catch {
      return null;
    }
    try {
      const parsed = Binding.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : null;
    } catch {
      return null; // a torn or foreign file is treated as missing: the server is asked again
    }
  }

  /** A resumed / forked session whose lineage could not be read yet: later events must look again. */
  markLineagePending(sessionId: string): void {
    const file = path.join(path.dirname(this.file(sessionId)), "lineage-pending");
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, "fork\n", { mode: 0o600 });
  }

  lineagePending(sessionId: string): boolean {
    try {
      readFileSync(path.join(path.dirname(this.file(sessionId)), "lineage-pending"));
      return true;
    } catch {
      return false;
    }
  }

  private runningFile(sessionId: string, operationId: string): string {
    return path.join(path.dirname(this.file(sessionId)), `running-${h(operationId)}.json`);
  }

  /**
   * A tool call the gate allowed and whose outcome Claude Code has not reported yet. Claude Code
   * 2.1.x sends no PostToolUse(Failure) for a call it interrupted (test/adapters/real/claude-code.test.ts),
   * so what is still marked at SessionEnd ended without an outcome: the hook reports it as unknown.
   */
  markRunning(sessionId: string, operationId: string): void {
    const file = this.runningFile(sessionId, operationId);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ operationId }), { mode: 0o600 });
  }

  settled(sessionId: string, operationId: string): void {
    try {
      unlinkSync(this.runningFile(sessionId, operationId));
    } catch {
      /* never marked (denied, or allowed before this version) or already settled */
    }
  }

  /** Operation ids still marked running in this session. */
  unsettled(sessionId: string): string[] {
    const dir = path.dirname(this.file(sessionId));
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.startsWith("running-") && n.endsWith(".json"));
    } catch {
      return [];
    }
    const ids: string[] = [];
    for (const n of names) {
      try {
        const id = (JSON.parse(readFileSync(path.join(dir, n), "utf8")) as { operationId?: unknown }).operationId;
        if (typeof id === "string" && id) ids.push(id);
      } catch {
        /* torn or foreign: skipped */
      }
    }
    return ids;
  }

  write(sessionId: string, binding: Binding, agentId?: string): void {
    const file = this.file(sessionId, agentId);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(tmp, JSON.stringify(binding), { mode: 0o600 });
    renameSync(tmp, file);
  }
}
