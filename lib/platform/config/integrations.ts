// The integrations' settings (signing keys, webhooks, metrics, tracing), derived from the one
// configuration table (lib/platform/config) plus OpenTelemetry's own OTEL_* variables. Read per call (cheap), so
// a test or a rotated setting takes effect without a restart.
import path from "node:path";
import { setting } from ".";

export interface IntegrationsConfig {
  signingKeyDir: string;
  metricsToken: string | null;
  /** Origins that are this deployment (a webhook may not point at them). */
  selfOrigins: string[];
  webhook: {
    retryBaseMs: number;
    retryMaxMs: number;
    maxAttempts: number;
    timeoutMs: number;
    pollMs: number;
    /** CIDRs outside the public internet that deliveries may reach anyway (QUIESCE_WEBHOOK_ALLOW_PRIVATE). */
    allowPrivate: string[];
  };
  tracing: { enabled: boolean; serviceName: string };
}

/** `http://host:port` for each server of a connection URL (`postgresql://u@h1:5432,h2:5433/db`); none for libpq's keyword form. */
function serverOrigins(conn: string | undefined, defaultPort: number): string[] {
  const m = conn ? /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?]*@)?([^/?#]+)/i.exec(conn.trim()) : null;
  if (!m) return [];
  return m[1]!.split(",").flatMap((hp) => {
    const x = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hp);
    if (!x) return [];
    try {
      return [new URL(`http://${x[1]}:${x[2] ?? defaultPort}`).origin];
    } catch {
      return [];
    }
  });
}

export function integrationsConfig(env: Record<string, string | undefined> = process.env): IntegrationsConfig {
  const selfOrigins = new Set<string>();
  // The provider simulator counts as this deployment too: a delivery to its /reset would wipe the jobs
  // the barrier checks effects against.
  for (const u of [
    setting("QUIESCE_PUBLIC_URL", env),
    setting("NEXTAUTH_URL", env),
    setting("QUIESCE_URL", env),
    setting("QUIESCE_PROVIDER_SIM_URL", env),
  ]) {
    try {
      if (u) selfOrigins.add(new URL(u).origin);
    } catch {
      /* not a URL: nothing to compare with */
    }
  }
  // The database and Redis are ours too (a POST to them must not be a way to poke at them).
  for (const [conn, port] of [
    [setting("DATABASE_URL", env), 5432],
    [setting("QUIESCE_LISTEN_URL", env), 5432],
    [setting("REDIS_URL", env), 6379],
  ] as const)
    for (const o of serverOrigins(conn, port)) selfOrigins.add(o);
  // The ports this deployment listens on here; any loopback, unspecified or own interface address counts
  // (lib/platform/security/outbound.ts#isSelf), so one spelling each is enough.
  if (env.PORT) selfOrigins.add(`http://127.0.0.1:${setting("PORT", env)}`);
  if (env.QUIESCE_API_PORT) selfOrigins.add(`http://127.0.0.1:${setting("QUIESCE_API_PORT", env)}`);
  const e = env;
  const otelOff = /^(true|1)$/i.test(e.OTEL_SDK_DISABLED ?? "") || e.OTEL_TRACES_EXPORTER === "none";
  return {
    // A runtime folder, not part of the build: keep Next from tracing the whole project through it.
    signingKeyDir: path.resolve(
      /*turbopackIgnore: true*/ setting("QUIESCE_SIGNING_KEY_DIR", env) ?? path.join(setting("QUIESCE_DATA_DIR", env), "signing"),
    ),
    metricsToken: setting("QUIESCE_METRICS_TOKEN", env) ?? null,
    selfOrigins: [...selfOrigins],
    webhook: {
      retryBaseMs: setting("QUIESCE_WEBHOOK_RETRY_BASE_MS", env),
      retryMaxMs: setting("QUIESCE_WEBHOOK_RETRY_MAX_MS", env),
      maxAttempts: setting("QUIESCE_WEBHOOK_MAX_ATTEMPTS", env),
      timeoutMs: setting("QUIESCE_WEBHOOK_TIMEOUT_MS", env),
      pollMs: setting("QUIESCE_WEBHOOK_POLL_MS", env),
      allowPrivate: setting("QUIESCE_WEBHOOK_ALLOW_PRIVATE", env),
    },
    tracing: {
      enabled: !otelOff && !!(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || e.OTEL_TRACES_EXPORTER === "otlp"),
      serviceName: e.OTEL_SERVICE_NAME ?? "quiesce",
    },
  };
}
