// OpenTelemetry traces for gate decisions, kills, barrier steps and settlements. Off unless the
// standard OTEL_* variables ask for it (OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// or OTEL_TRACES_EXPORTER=otlp; OTEL_SDK_DISABLED=true wins). When off, the wrappers below call the
// function straight away: no SDK is loaded, no span or context is created (the gate's hot path pays
// one boolean check). When on: the OTel JS SDK with the OTLP/HTTP exporter (which reads the rest of
// the OTEL_EXPORTER_OTLP_* and OTEL_BSP_* variables itself), W3C trace context, and a W3C
// `traceparent` from the agent (SDK and adapters send it) as the parent of the request's spans.
import type { Attributes, Span, Tracer } from "@opentelemetry/api";
import { integrationsConfig } from "../config/integrations";

interface Tracing {
  tracer: Tracer;
  flush: () => Promise<void>;
  api: typeof import("@opentelemetry/api");
}

const g = globalThis as unknown as { quiesceTracing?: Promise<Tracing | null>; quiesceTracingOn?: boolean };

function enabled(): boolean {
  if (g.quiesceTracingOn === undefined) {
    try {
      g.quiesceTracingOn = integrationsConfig().tracing.enabled;
    } catch {
      g.quiesceTracingOn = false;
    }
  }
  return g.quiesceTracingOn;
}

async function init(): Promise<Tracing | null> {
  const cfg = integrationsConfig().tracing;
  const api = await import("@opentelemetry/api");
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { W3CTraceContextPropagator },
    { AsyncLocalStorageContextManager },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/core"),
    import("@opentelemetry/context-async-hooks"),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": cfg.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  return { tracer: provider.getTracer("quiesce"), flush: () => provider.forceFlush(), api };
}

function tracing(): Promise<Tracing | null> {
  g.quiesceTracing ??= init().catch((e) => {
    console.error("[tracing] could not start:", (e as Error).message);
    return null;
  });
  return g.quiesceTracing;
}

/**
 * Runs `fn` in a span named `name` (a child of `traceparent` when one is given and valid, else of the
 * active span). Attributes of the result (`decision`, `reason`) are recorded on gate spans. A thrown
 * error marks the span as failed and is rethrown unchanged.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span?: Span) => Promise<T>,
  traceparent?: string | null,
): Promise<T> {
  if (!enabled()) return fn();
  const t = await tracing();
  if (!t) return fn();
  const { api } = t;
  const parent = traceparent ? api.propagation.extract(api.context.active(), { traceparent }) : api.context.active();
  return t.tracer.startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      const out = await fn(span);
      const o = out as { decision?: unknown; reason?: unknown } | null;
      if (o && typeof o === "object" && typeof o.decision === "string")
        span.setAttributes({ "quiesce.decision": o.decision, "quiesce.reason": String(o.reason) });
      return out;
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The gate's wrapper: the same as withSpan, named for where it is used. */
export const gateSpan = <T>(
  name: string,
  traceparent: string | null | undefined,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> => (enabled() ? withSpan(name, attributes, fn, traceparent) : fn());

/** Sends every finished span now (tests; a process about to exit). */
export async function flushTracing(): Promise<void> {
  if (!enabled()) return;
  const t = await tracing();
  await t?.flush();
}

/** A valid W3C traceparent header value, or null (garbage from a client is ignored, never an error). */
export function validTraceparent(v: string | null | undefined): string | null {
  return v && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(v.trim()) && !/^00-0{32}-/.test(v.trim()) ? v.trim() : null;
}
