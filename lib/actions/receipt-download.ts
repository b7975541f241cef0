// JSON and YAML downloads of a stop receipt: the stored body (digest included) through the one
// serializer, byte-for-byte what the API serves, for a review packet. Same authorization as the page.
import "server-only";
import { QuiesceError } from "../platform/errors";
import { currentSession } from "../modules/sessions";
import { getConsoleReceipt } from "../modules/stop";
import { envelopeText, serializeReceipt } from "../control/evidence/receipt";
import { ReceiptVersionQuery } from "../schemas/console";
import { logger } from "../platform/log";

export function receiptDownload(format: "json" | "yaml" | "dsse") {
  return async (req: Request, ctx: { params: Promise<{ barrierId: string }> }): Promise<Response> => {
    const session = await currentSession();
    if (!session) return Response.json({ error: { code: "unauthenticated", message: "sign in" } }, { status: 401 });
    const { barrierId } = await ctx.params;
    const q = ReceiptVersionQuery.safeParse(Object.fromEntries(new URL(req.url).searchParams));
    if (!q.success)
      return Response.json({ error: { code: "bad_request", message: `version: ${q.error.issues[0]?.message}` } }, { status: 400 });
    try {
      const r = await getConsoleReceipt(session.principal, barrierId, q.data.version);
      if (!r)
        return Response.json({ error: { code: "not_found", message: "no receipt has been issued for this barrier yet" } }, { status: 404 });
      if (format === "dsse") {
        if (!r.envelope)
          return Response.json(
            { error: { code: "not_found", message: "this receipt version was issued before receipts were signed" } },
            { status: 404 },
          );
        return new Response(envelopeText(r.envelope), {
          headers: {
            "content-type": "application/json; charset=utf-8",
            "content-disposition": `attachment; filename="stop-receipt-${barrierId}-v${r.version}.dsse.json"`,
            "cache-control": "no-store",
          },
        });
      }
      const name = `stop-receipt-${barrierId}-v${r.version}.${format}`;
      // The one serializer: the API serves the same bytes for the same version.
      const text = serializeReceipt(r.body, format);
      return new Response(text, {
        headers: {
          "content-type": format === "json" ? "application/json; charset=utf-8" : "application/yaml; charset=utf-8",
          "content-disposition": `attachment; filename="${name}"`,
          "cache-control": "no-store",
        },
      });
    } catch (err) {
      if (err instanceof QuiesceError) return Response.json(err.toBody(), { status: err.httpStatus });
      logger("console").error({ err }, "receipt download failed");
      return Response.json({ error: { code: "internal", message: "internal error" } }, { status: 500 });
    }
  };
}
