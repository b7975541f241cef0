// GET /api/v1/budgets — spend against each budget of the enabled policy (docs/policies.md#budgets).
import { apiRoute } from "@/lib/api/route";
import { listBudgets } from "@/lib/modules/policy";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal }) => ({ status: 200, json: { budgets: await listBudgets(principal) } }));
