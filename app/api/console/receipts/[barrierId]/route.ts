import { consoleGet } from "@/lib/actions/console-route";
import { receiptView } from "@/lib/modules/runs";
import { ReceiptVersionQuery } from "@/lib/schemas/console";
import { badRequest } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

export const GET = consoleGet<{ barrierId: string }>(async ({ session, url, params }) => {
  const q = ReceiptVersionQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) throw badRequest(`version: ${q.error.issues[0]?.message}`);
  return receiptView(session.principal, params.barrierId, q.data.version);
});
