// GET /api/v1/recoveries — recovery items of the caller's team (docs/evidence.md#recovery), still owed by default.
import { apiRoute } from "@/lib/api/route";
import { listRecoveries } from "@/lib/modules/stop";
import { RecoveriesQuery } from "@/lib/schemas/recovery";

export const dynamic = "force-dynamic";

export const GET = apiRoute({ query: RecoveriesQuery }, async ({ principal, query }) => ({
  status: 200,
  json: { recoveries: await listRecoveries(principal, query) },
}));
