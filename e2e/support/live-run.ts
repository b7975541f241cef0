// A live run the way production makes one: registered by an agent key, a deployment dispatched to the
// simulated provider and admitted by the gate (so it is `running` at the provider when the kill lands).
import { e2e } from "./env";
import { uid, type ApiRun } from "./api";

export type SimMode = "cancel_cleanly" | "commit_during_cancel" | "status_down";

export interface LiveRun {
  run: ApiRun;
  child: ApiRun;
  operationId: string;
  jobId: string | null;
}

/** `jobId`: the provider's id for the deployment (default: a fresh short one). */
export async function liveRun(title: string, mode: SimMode = "cancel_cleanly", opts: { jobId?: string } = {}): Promise<LiveRun> {
  const agent = e2e.agent();
  const run = await agent.createRun({ taskId: uid("task"), title, harness: "claude_code" });
  const child = await agent.createRun({
    taskId: uid("task"),
    title: `${title} — subagent`,
    harness: "claude_code",
    parentRunId: run.runId,
    parentLeaseId: run.leaseId,
  });
  // A call that ran and finished before the kill: evidence, not something to settle.
  const read = uid("op");
  await agent.gate(run, read, "Read");
  await agent.complete(read, "succeeded");
  // Work not started yet: the kill must cancel it and keep it.
  await agent.registerOperation(child, { operationId: uid("job"), kind: "queued", tool: "notify.slack" });
  const operationId = uid("deploy");
  let jobId: string | null = null;
  if (e2e.simUrl) {
    jobId = opts.jobId ?? uid("sim-job");
    const res = await fetch(`${e2e.simUrl}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jobId, mode, delayMs: 300, runId: run.runId, operationId }),
    });
    if (!res.ok) throw new Error(`provider-sim refused the job: ${res.status} ${await res.text()}`);
    await agent.registerOperation(run, {
      operationId,
      kind: "queued",
      tool: "deploy.apply",
      providerName: "deploy-sim",
      providerJobId: jobId,
    });
    const admitted = await agent.admit(operationId);
    if (admitted.decision !== "allow") throw new Error(`admit answered ${admitted.decision} ${admitted.reason}`);
    await agent.heartbeat(operationId);
  } else if (mode === "status_down") {
    // Without the simulated provider, a plain tool call nobody can be asked about settles as unknown.
    await agent.gate(run, operationId, "deploy.apply");
  }
  return { run, child, operationId, jobId };
}
