// The eval harness's side of a pod process (pod-main.ts): an Executor whose jobs run in that process.
import path from "node:path";
import { ROOT, spawnTs, type Line, type Proc } from "./proc";
import type { AdmitAnswer, CallAnswer, ExecOutcome, Executor, JobBehaviour, RunHandle, RunOptions } from "../../lib/drill/types";
import type { GateBody } from "../../lib/schemas/gate";
import type { JobStamp } from "../../lib/agent/sdk/worker/stamp";

const OUTCOME_TIMEOUT_MS = 180_000;
let seq = 0;

export class Pod implements Executor {
  proc!: Proc;
  label = "";

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {}

  async start(): Promise<void> {
    this.proc = spawnTs(this.name, path.join(ROOT, "evals", "support", "pod-main.ts"), [], {
      env: { ...this.env, POD_NAME: this.name },
      logDir: this.logDir,
      stdin: true,
    });
    const ready = await this.proc.waitForLine((l) => l.event === "ready", 120_000, "ready");
    this.label = `${this.name} (separate process, pid ${ready.pid})`;
  }

  async restart(): Promise<void> {
    await this.proc.stop("SIGTERM");
    await this.start();
  }

  private send(cmd: string, payload: Record<string, unknown>): string {
    const id = `${this.name}-${++seq}`;
    this.proc.write({ id, cmd, ...payload });
    return id;
  }

  private line(id: string, event: string, timeoutMs = OUTCOME_TIMEOUT_MS): Promise<Line> {
    const proc = this.proc;
    return proc
      .waitForLine((l) => l.id === id && (l.event === event || l.event === "error"), timeoutMs, `${event} of ${id}`)
      .then((l) => {
        if (l.event === "error") throw new Error(`${this.name}: ${String(l.message)}`);
        return l;
      });
  }

  private handle(id: string, operationId: string): RunHandle {
    const outcome = this.line(id, "outcome").then((l) => l as unknown as ExecOutcome);
    const firstAdmit = Promise.race([
      this.line(id, "admit").then((l) => ({ decision: String(l.decision), reason: String(l.reason) }) as AdmitAnswer),
      outcome.then((o) => ({ decision: "none", reason: o.reason ?? o.status })),
    ]);
    const started = Promise.race([this.line(id, "started").then(() => true), outcome.then((o) => o.handlerStarted)]);
    // Unobserved rejections must not end the harness: each promise's consumer handles its own.
    for (const p of [outcome, firstAdmit, started]) p.catch(() => {});
    return { operationId, firstAdmit, started, outcome };
  }

  run(stamp: JobStamp, job: JobBehaviour, opts: RunOptions = {}): RunHandle {
    return this.handle(this.send("run", { stamp, job, opts }), stamp.operationId);
  }

  async call(body: GateBody, external?: { simUrl: string }): Promise<CallAnswer> {
    const l = await this.line(this.send("call", { body, external }), "reply", 60_000);
    return {
      decision: String(l.decision),
      reason: String(l.reason),
      currentEpoch: (l.currentEpoch as number | null) ?? null,
      externalCallSent: l.externalCallSent === true,
      ...(l.error ? { error: String(l.error) } : {}),
    };
  }

  async scheduleRetry(stamp: JobStamp, tool: string, delayMs: number, job: JobBehaviour): Promise<RunHandle> {
    const id = this.send("retry", { stamp, tool, delayMs, job });
    const reply = await this.line(id, "reply", 60_000);
    return this.handle(id, String(reply.operationId));
  }

  async close(): Promise<void> {
    await this.proc?.stop("SIGTERM");
  }
}
