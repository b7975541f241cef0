// GET /metrics — Prometheus text format, behind the metrics token (Authorization: Bearer
// $QUIESCE_METRICS_TOKEN). Off (404) until a token is set. In-process gate counters are this process's
// own; everything else is read from PostgreSQL at scrape time (docs/integrations.md).
import { timingSafeEqual, createHash } from "node:crypto";
import { integrationsConfig } from "@/lib/platform/config/integrations";
import { processMetricsText, PROMETHEUS_CONTENT_TYPE } from "@/lib/platform/telemetry/metrics";
import { databaseMetricsText } from "@/lib/modules/runs";

export const dynamic = "force-dynamic";

const h = (s: string) => createHash("sha256").update(s).digest();

export async function GET(req: Request): Promise<Response> {
  const token = integrationsConfig().metricsToken;
  if (!token)
    return Response.json({ error: { code: "not_found", message: "metrics are off: set QUIESCE_METRICS_TOKEN" } }, { status: 404 });
  const given = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
  if (!timingSafeEqual(h(given), h(token))) {
    return Response.json(
      { error: { code: "unauthenticated", message: "authorization: Bearer <metrics token> required" } },
      { status: 401, headers: { "www-authenticate": "Bearer" } },
    );
  }
  try {
    const text = (await processMetricsText()) + "\n" + (await databaseMetricsText({ type: "system", name: "metrics" }));
    return new Response(text, { headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } });
  } catch (err) {
    console.error("[metrics]", err);
    return Response.json({ error: { code: "unavailable", message: "metrics could not be read" } }, { status: 503 });
  }
}
