// Metrics read from PostgreSQL at scrape time, so every process answering /metrics reports the same:
// barriers by phase, kill → dispatch stopped and kill → first receipt as histograms (over every barrier
// so far, which only ever grows, as a Prometheus histogram must), open reconciliations by age, and the
// webhook outbox's backlog and dead letters. System principal only (the route checks the metrics token).
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { forbidden } from "../../platform/errors";
import { gaugeText, histogramText } from "../../platform/telemetry/metrics";
import type { Principal } from "../../platform/auth/principal";

const KILL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600] as const;
const PHASES = ["revoking", "settling", "quiet", "complete"] as const;

async function histogramOf(sql: string): Promise<{ le: number[]; count: number; sum: number }> {
  const cols = KILL_BUCKETS.map((b, i) => `count(*) FILTER (WHERE d <= ${b})::int AS b${i}`).join(", ");
  const [row] = await prisma().$queryRawUnsafe<Record<string, number>[]>(
    `SELECT ${cols}, count(*)::int AS n, coalesce(sum(d), 0)::float8 AS s FROM (${sql}) x`,
  );
  return { le: KILL_BUCKETS.map((_, i) => Number(row?.[`b${i}`] ?? 0)), count: Number(row?.n ?? 0), sum: Number(row?.s ?? 0) };
}

export async function databaseMetricsText(p: Principal): Promise<string> {
  if (p.type !== "system") throw forbidden("metrics are read with the metrics token");
  const phases = await prisma().$queryRawUnsafe<{ phase: string; n: number }[]>(
    `SELECT phase::text AS phase, count(*)::int AS n FROM barriers GROUP BY phase`,
  );
  const toDispatch = await histogramOf(
    `SELECT extract(epoch FROM dispatch_stopped_at - requested_at)::float8 AS d FROM barriers WHERE dispatch_stopped_at IS NOT NULL`,
  );
  const toReceipt = await histogramOf(
    `SELECT extract(epoch FROM r.created_at - b.requested_at)::float8 AS d FROM barriers b JOIN stop_receipts r ON r.barrier_id = b.id AND r.version = 1`,
  );
  const [rec] = await prisma().$queryRawUnsafe<{ h1: number; d1: number; w1: number; older: number; oldest: number | null }[]>(
    `SELECT count(*) FILTER (WHERE age < 3600)::int AS h1,
            count(*) FILTER (WHERE age >= 3600 AND age < 86400)::int AS d1,
            count(*) FILTER (WHERE age >= 86400 AND age < 604800)::int AS w1,
            count(*) FILTER (WHERE age >= 604800)::int AS older,
            max(age)::float8 AS oldest
       FROM (SELECT extract(epoch FROM clock_timestamp() - created_at) AS age FROM reconciliations WHERE status <> 'resolved') x`,
  );
  const outbox = await prisma().$queryRawUnsafe<{ status: string; n: number; oldest: number | null }[]>(
    `SELECT status, count(*)::int AS n, max(extract(epoch FROM clock_timestamp() - created_at))::float8 AS oldest FROM webhook_deliveries WHERE status <> 'delivered' GROUP BY status`,
  );
  const byPhase = new Map(phases.map((r) => [r.phase, r.n]));
  const pending = outbox.find((o) => o.status === "pending");
  return (
    [
      gaugeText(
        "quiesce_barriers",
        "Barriers by phase",
        PHASES.map((ph) => ({ labels: { phase: ph }, value: byPhase.get(ph) ?? 0 })),
      ),
      histogramText(
        "quiesce_kill_to_dispatch_stopped_seconds",
        "From a kill request to dispatch stopped (every barrier)",
        KILL_BUCKETS,
        toDispatch,
      ),
      histogramText(
        "quiesce_kill_to_receipt_seconds",
        "From a kill request to its first stop receipt (every barrier with one)",
        KILL_BUCKETS,
        toReceipt,
      ),
      gaugeText("quiesce_open_reconciliations", "Reconciliations not yet resolved, by age", [
        { labels: { age: "lt_1h" }, value: rec?.h1 ?? 0 },
        { labels: { age: "1h_to_24h" }, value: rec?.d1 ?? 0 },
        { labels: { age: "1d_to_7d" }, value: rec?.w1 ?? 0 },
        { labels: { age: "gt_7d" }, value: rec?.older ?? 0 },
      ]),
      gaugeText("quiesce_oldest_open_reconciliation_seconds", "Age of the oldest unresolved reconciliation (0 when none)", [
        { value: rec?.oldest ?? 0 },
      ]),
      gaugeText("quiesce_webhook_backlog", "Webhook deliveries waiting to be sent (pending)", [{ value: pending?.n ?? 0 }]),
      gaugeText("quiesce_webhook_backlog_oldest_seconds", "Age of the oldest pending webhook delivery (0 when none)", [
        { value: pending?.oldest ?? 0 },
      ]),
      gaugeText("quiesce_webhook_dead_letters", "Webhook deliveries that gave up (dead letters)", [
        { value: outbox.find((o) => o.status === "dead")?.n ?? 0 },
      ]),
    ].join("\n\n") + "\n"
  );
}
