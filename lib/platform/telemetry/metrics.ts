// Prometheus metrics. Two kinds, kept apart on purpose:
//  - in-process counters and histograms (gate decisions, gate latency), per process: Next.js may run
//    route handlers in several workers, so each scrape sees the process that answered it (sum across
//    instances with PromQL as usual);
//  - metrics read from PostgreSQL at scrape time (barriers, kill timings, reconciliations, webhook
//    outbox), which are the same whichever process answers (lib/modules/metrics).
import { Counter, Histogram, Registry } from "prom-client";

interface Metrics {
  registry: Registry;
  gateDecisions: Counter<"decision" | "reason" | "check">;
  gateLatency: Histogram<"check">;
}

// One registry per process, kept on globalThis so Next's module reloading does not register twice.
const g = globalThis as unknown as { quiesceMetrics?: Metrics };

function metrics(): Metrics {
  if (g.quiesceMetrics) return g.quiesceMetrics;
  const registry = new Registry();
  const gateDecisions = new Counter({
    name: "quiesce_gate_decisions_total",
    help: "Gate decisions answered by this process, by decision and reason",
    labelNames: ["decision", "reason", "check"] as const,
    registers: [registry],
  });
  const gateLatency = new Histogram({
    name: "quiesce_gate_decision_seconds",
    help: "Time to answer a gate or admit check in this process (one database round trip)",
    labelNames: ["check"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  g.quiesceMetrics = { registry, gateDecisions, gateLatency };
  return g.quiesceMetrics;
}

/** Records one answered gate/admit check. `startedAt` from performance.now(). */
export function recordGateDecision(check: "gate" | "admit", decision: string, reason: string, startedAt: number): void {
  const m = metrics();
  m.gateDecisions.inc({ decision, reason, check });
  m.gateLatency.observe({ check }, (performance.now() - startedAt) / 1000);
}

export async function processMetricsText(): Promise<string> {
  return metrics().registry.metrics();
}
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A histogram in the text exposition format from cumulative bucket counts (read from the database). */
export function histogramText(
  name: string,
  help: string,
  buckets: readonly number[],
  counts: { le: number[]; count: number; sum: number },
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  buckets.forEach((b, i) => lines.push(`${name}_bucket{le="${b}"} ${counts.le[i] ?? 0}`));
  lines.push(`${name}_bucket{le="+Inf"} ${counts.count}`, `${name}_sum ${counts.sum}`, `${name}_count ${counts.count}`);
  return lines.join("\n");
}

export function gaugeText(name: string, help: string, samples: { labels?: Record<string, string>; value: number }[]): string {
  const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
  for (const s of samples) {
    const l = s.labels
      ? Object.entries(s.labels)
          .map(([k, v]) => `${k}="${esc(v)}"`)
          .join(",")
      : "";
    lines.push(`${name}${l ? `{${l}}` : ""} ${s.value}`);
  }
  return lines.join("\n");
}
