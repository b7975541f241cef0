// HTTP load through autocannon (a maintained load generator): keep-alive connections, a fixed number of
// requests, every response checked. Latencies are taken from autocannon's per-response event in
// fractional milliseconds (its own histogram keeps whole milliseconds, too coarse for a 1 ms path).
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { summarize, type Stats } from "./measure";

export interface LoadSpec {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** A fresh body for every request (for example a new operation id). */
  body?: () => string;
  connections: number;
  amount: number;
  /** Expected status (default: any 2xx). */
  status?: number;
}

function once(
  spec: LoadSpec,
  amount: number,
): Promise<{ samples: number[]; seconds: number; bad: number; errors: number; lastBad?: string }> {
  return new Promise((resolve, reject) => {
    const samples: number[] = [];
    let bad = 0;
    let lastBad: string | undefined;
    // Throughput from the responses themselves: autocannon ends a run with `amount` on its next
    // one-second tick, so its duration (and the wall time around it) is rounded up to whole seconds.
    let first = Infinity;
    let last = 0;
    const headers = { ...(spec.body ? { "content-type": "application/json" } : {}), ...spec.headers };
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        amount,
        timeout: 30,
        requests: [
          {
            method: spec.method ?? "GET",
            headers,
            ...(spec.body ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: spec.body!() }) } : {}),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({ samples, seconds: (last - first) / 1000, bad, errors: result.errors + result.timeouts, lastBad });
      },
    );
    instance.on("response", (_client, status: number, _bytes, ms: number) => {
      const now = performance.now();
      first = Math.min(first, now - ms);
      last = now;
      const ok = spec.status === undefined ? status >= 200 && status < 300 : status === spec.status;
      if (ok) samples.push(ms);
      else {
        bad++;
        lastBad = String(status);
      }
    });
  });
}

/** Warm-up (uncounted), then `amount` requests; throws when any answer is not the expected status. */
export async function load(spec: LoadSpec, warmup: number): Promise<Stats> {
  if (warmup > 0) await once(spec, warmup);
  const r = await once(spec, spec.amount);
  if (r.bad > 0 || r.errors > 0) {
    throw new Error(`${spec.name}: ${r.bad} unexpected statuses (last ${r.lastBad}), ${r.errors} errors/timeouts of ${spec.amount}`);
  }
  return summarize(spec.name, spec.connections, r.samples, r.seconds * 1000);
}

export interface RaceResult {
  total: number;
  before: number;
  beforeAllow: number;
  after: number;
  afterAllow: number;
  rate: number;
  killMs: number;
}

/**
 * Gate calls at a fixed overall rate on the run tree while `kill()` lands halfway: every call's send
 * time is taken when autocannon builds it (no later than it is sent; one request in flight per
 * connection), its answer from the response body. A call built after the kill returned (so after its
 * commit) must not be `allow`.
 */
export function raceKill(spec: {
  url: string;
  headers: Record<string, string>;
  body: () => string;
  rate: number;
  seconds: number;
  connections: number;
  kill: () => Promise<void>;
}): Promise<RaceResult> {
  return new Promise((resolve, reject) => {
    const calls: { sentAt: number; decision: string }[] = [];
    let killStarted = Infinity;
    let killReturned = Infinity;
    let killError: unknown;
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        overallRate: spec.rate,
        duration: spec.seconds,
        timeout: 30,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json", ...spec.headers },
            setupRequest: (req: autocannon.Request, context: object) => {
              (context as { sentAt?: number }).sentAt = performance.now();
              return { ...req, body: spec.body() };
            },
            onResponse: (status: number, body: string, context: object) => {
              let decision = `status ${status}`;
              try {
                decision = status === 200 ? (JSON.parse(body) as { decision: string }).decision : decision;
              } catch {
                /* kept as status */
              }
              calls.push({ sentAt: (context as { sentAt: number }).sentAt, decision });
            },
          },
        ],
      },
      (err) => {
        if (err) return reject(err);
        if (killError) return reject(killError);
        const before = calls.filter((c) => c.sentAt < killStarted);
        const after = calls.filter((c) => c.sentAt > killReturned);
        resolve({
          total: calls.length,
          before: before.length,
          beforeAllow: before.filter((c) => c.decision === "allow").length,
          after: after.length,
          afterAllow: after.filter((c) => c.decision === "allow").length,
          rate: calls.length / spec.seconds,
          killMs: killReturned - killStarted,
        });
      },
    );
    setTimeout(
      () => {
        killStarted = performance.now();
        spec.kill().then(
          () => {
            killReturned = performance.now();
          },
          (e) => {
            killError = e;
          },
        );
      },
      (spec.seconds * 1000) / 2,
    ).unref();
    void instance;
  });
}
