// A little live traffic so the console has something real to show: a few run trees registered by the
// demo agent through the machine API, with gate decisions, calls in flight and queued work.
import { AgentApi, uid } from "./api";

const TASKS = [
  {
    taskId: "deploy-web-frontend",
    title: "Deploy web frontend to production",
    harness: "claude_code",
    children: ["Run database migration", "Update CDN config"],
    tools: ["Bash", "Edit", "deploy.apply"],
  },
  {
    taskId: "triage-ticket-4821",
    title: "Triage support ticket #4821",
    harness: "codex",
    children: ["Summarise customer history"],
    tools: ["search.tickets", "crm.read"],
  },
  { taskId: "nightly-report", title: "Nightly revenue report", harness: "mcp", children: [], tools: ["warehouse.query", "sheets.write"] },
  {
    taskId: "refactor-billing",
    title: "Refactor billing retries",
    harness: "claude_code",
    children: ["Write tests", "Open pull request"],
    tools: ["Read", "Edit", "Bash"],
  },
];

export async function populate(baseUrl: string, agentKey: string): Promise<void> {
  const api = new AgentApi(baseUrl, agentKey);
  for (const t of TASKS) {
    const root = await api.createRun({ taskId: t.taskId, title: t.title, harness: t.harness });
    for (const tool of t.tools) await api.gate(root, uid("op"), tool);
    for (const title of t.children) {
      const child = await api.createRun({
        taskId: t.taskId,
        title,
        harness: t.harness,
        parentRunId: root.runId,
        parentLeaseId: root.leaseId,
      });
      await api.gate(child, uid("op"), t.tools[0]!);
    }
    await api.registerOperation(root, { operationId: uid("job"), kind: "queued", tool: "notify.slack" });
  }
}
