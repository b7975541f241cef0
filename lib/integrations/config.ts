// Every setting of the integrations (signing keys, webhooks, metrics, tracing) read in ONE place,
// validated with zod. Read per call (cheap), so a test or a rotated setting takes effect without a restart.
import path from "node:path";
import { z } from "zod";

const int = (dflt: number, min = 0) => z.coerce.number().int().min(min).default(dflt);

const Schema = z.object({
  QUIESCE_DATA_DIR: z.string().min(1).default(".quiesce"),
  QUIESCE_SIGNING_KEY_DIR: z.string().min(1).optional(),
  QUIESCE_METRICS_TOKEN: z.string().min(16, "at least 16 characters").optional(),
  QUIESCE_PUBLIC_URL: z.string().url().optional(),
  NEXTAUTH_URL: z.string().optional(),
  QUIESCE_URL: z.string().optional(),
  PORT: z.string().optional(),
  QUIESCE_WEBHOOK_RETRY_BASE_MS: int(1_000, 1),
  QUIESCE_WEBHOOK_RETRY_MAX_MS: int(300_000, 1),
  QUIESCE_WEBHOOK_MAX_ATTEMPTS: int(15, 1),
  QUIESCE_WEBHOOK_TIMEOUT_MS: int(10_000, 100),
  QUIESCE_WEBHOOK_POLL_MS: int(500, 10),
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
});

export interface IntegrationsConfig {
  signingKeyDir: string;
  metricsToken: string | null;
  /** Origins that are this deployment (a webhook may not point at them). */
  selfOrigins: string[];
  webhook: { retryBaseMs: number; retryMaxMs: number; maxAttempts: number; timeoutMs: number; pollMs: number };
  tracing: { enabled: boolean; serviceName: string };
}

export function integrationsConfig(env: Record<string, string | undefined> = process.env): IntegrationsConfig {
  const parsed = Schema.safeParse(env);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`${String(i.path[0])}: ${i.message}`);
  }
  const e = parsed.data;
  const selfOrigins = new Set<string>();
  for (const u of [e.QUIESCE_PUBLIC_URL, e.NEXTAUTH_URL, e.QUIESCE_URL]) {
    try { if (u) selfOrigins.add(new URL(u).origin); } catch { /* not a URL: nothing to compare with */ }
  }
  if (e.PORT) for (const h of ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"]) selfOrigins.add(`http://${h}:${e.PORT}`);
  const otelOff = /^(true|1)$/i.test(e.OTEL_SDK_DISABLED ?? "") || e.OTEL_TRACES_EXPORTER === "none";
  return {
    // A runtime folder, not part of the build: keep Next from tracing the whole project through it.
    signingKeyDir: path.resolve(/*turbopackIgnore: true*/ e.QUIESCE_SIGNING_KEY_DIR ?? path.join(e.QUIESCE_DATA_DIR, "signing")),
    metricsToken: e.QUIESCE_METRICS_TOKEN ?? null,
    selfOrigins: [...selfOrigins],
    webhook: {
      retryBaseMs: e.QUIESCE_WEBHOOK_RETRY_BASE_MS, retryMaxMs: e.QUIESCE_WEBHOOK_RETRY_MAX_MS,
      maxAttempts: e.QUIESCE_WEBHOOK_MAX_ATTEMPTS, timeoutMs: e.QUIESCE_WEBHOOK_TIMEOUT_MS, pollMs: e.QUIESCE_WEBHOOK_POLL_MS,
    },
    tracing: {
      enabled: !otelOff && !!(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || e.OTEL_TRACES_EXPORTER === "otlp"),
      serviceName: e.OTEL_SERVICE_NAME ?? "quiesce",
    },
  };
}
