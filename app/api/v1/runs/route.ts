// POST /api/v1/runs — register a run or child run (idempotent on native identity);
// GET /api/v1/runs — the team's runs, newest first.
import { apiRoute } from "@/lib/api/route";
import { createRun, listRuns } from "@/lib/modules/runs";
import { CreateRunBody, ListRunsQuery } from "@/lib/schemas/runs";
import { runRegistrations } from "@/lib/modules/gate";

export const POST = apiRoute({ body: CreateRunBody, quota: runRegistrations }, async ({ principal, body }) => {
  const r = await createRun(principal, body);
  return { status: r.created ? 201 : 200, json: r };
});

export const GET = apiRoute({ query: ListRunsQuery }, async ({ principal, query }) => ({ json: await listRuns(principal, query) }));
