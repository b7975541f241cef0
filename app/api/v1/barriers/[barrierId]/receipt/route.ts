// GET /api/v1/barriers/{barrierId}/receipt[?version=n][&format=yaml|dsse] — the stop receipt (docs/architecture.md#the-stop-receipt):
// the latest version unless one is named; 404 until the barrier issued one. JSON by default; YAML
// with ?format=yaml or `Accept: application/yaml`; the signed DSSE envelope (what `quiesce verify`
// checks offline) with ?format=dsse. The digest covers the canonical JSON of the body.
import { apiRoute } from "@/lib/api/route";
import { getReceipt } from "@/lib/modules/stop";
import { envelopeText, serializeReceipt } from "@/lib/control/evidence/receipt";
import { ReceiptQuery } from "@/lib/schemas/barriers";
import { QuiesceError } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

export const GET = apiRoute({ query: ReceiptQuery }, async ({ principal, params, query, header }) => {
  const r = await getReceipt(principal, params.barrierId ?? "", query.version);
  const headers = { "x-receipt-version": String(r.version), "x-receipt-digest": r.digest, "cache-control": "no-store" };
  if (query.format === "dsse") {
    if (!r.envelope) throw new QuiesceError("not_found", "this receipt version was issued before receipts were signed");
    return new Response(envelopeText(r.envelope), {
      status: 200,
      headers: { ...headers, "content-type": "application/json; charset=utf-8" },
    });
  }
  const accept = header("accept") ?? "";
  const yaml = query.format === "yaml" || (query.format === undefined && /application\/(x-)?yaml|text\/yaml/.test(accept));
  // The one serializer: the console's downloads send the same bytes.
  return new Response(serializeReceipt(r.body, yaml ? "yaml" : "json"), {
    status: 200,
    headers: { ...headers, "content-type": yaml ? "application/yaml; charset=utf-8" : "application/json; charset=utf-8" },
  });
});
