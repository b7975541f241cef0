// GET /api/v1/runs/{runId}/ledger — the operation ledger a restarted run inherits (docs/evidence.md#restart).
import { apiRoute } from "@/lib/api/route";
import { getLedger } from "@/lib/modules/stop";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({ status: 200, json: await getLedger(principal, params.runId ?? "") }));
