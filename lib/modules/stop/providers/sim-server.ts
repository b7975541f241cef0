// The simulated deployment provider (docs/architecture.md#, #the-cancellation-barrier; docs/ideas.md#barriers:
// "a provider stub that deliberately
// commits during the cancellation race. Then break the status endpoint."). A separate HTTP process
// (`quiesce provider-sim --port <n>`) whose behaviour tests, evals and the demo control per job:
//
//   cancel_cleanly        cancel → accepted; the job stops; status: effect absent, final
//   commit_during_cancel  cancel → accepted, but the job crossed its commit point first: effect present
//   status_down           cancel → accepted; the status endpoint answers 503 (truth unknowable)
//   slow                  every answer waits delayMs, then behaves as cancel_cleanly
//   reject                cancel → 409 rejected; the job keeps running (commits at commitAfterMs if set)
//   drop                  cancel and status connections are destroyed (transport failure)
//
// Provider protocol (what lib/modules/stop/providers/http.ts calls):
//   POST /jobs/{id}/cancel   or   POST /cancel { providerJobId }
//   GET  /jobs/{id}/effect   or   GET  /status?providerJobId=…
//   POST /jobs/{id}/compensate   or   POST /compensate { providerJobId }: releases a committed job's reserved preview (recovery); a job created
//                                with compensation "ignore" accepts the request and keeps the effect
// Control API (tests, evals, demo): POST /jobs, GET /jobs, GET /jobs/{id}, POST /jobs/{id}/mode,
// POST /jobs/{id}/commit, POST /reset, GET /health. State lives in memory: the process is the provider.
import "server-only";
import http from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { sleep } from "../../../platform/wait";

export const SIM_MODES = ["cancel_cleanly", "commit_during_cancel", "status_down", "slow", "reject", "drop"] as const;
export type SimMode = (typeof SIM_MODES)[number];

export const SIM_COMPENSATIONS = ["release", "ignore"] as const;

export interface SimJob {
  jobId: string;
  mode: SimMode;
  compensation: (typeof SIM_COMPENSATIONS)[number];
  compensateRequests: number;
  compensatedAt: string | null;
  delayMs: number;
  state: "running" | "cancelled" | "committed" | "compensated";
  runId: string | null;
  operationId: string | null;
  createdAt: string;
  committedAt: string | null;
  cancelledAt: string | null;
  cancelRequests: number;
  statusRequests: number;
  detail: unknown;
}

const CreateJob = z.strictObject({
  jobId: z.string().trim().min(1).max(200).optional(),
  mode: z.enum(SIM_MODES).default("cancel_cleanly"),
  compensation: z.enum(SIM_COMPENSATIONS).default("release"),
  delayMs: z.number().int().min(0).max(600_000).default(1500),
  commitAfterMs: z.number().int().min(0).max(3_600_000).optional(),
  runId: z.string().max(200).optional(),
  operationId: z.string().max(200).optional(),
  detail: z.unknown().optional(),
});
const SetMode = z.strictObject({
  mode: z.enum(SIM_MODES),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  compensation: z.enum(SIM_COMPENSATIONS).optional(),
});

export interface SimServer {
  url: string;
  port: number;
  close(): Promise<void>;
  jobs: Map<string, SimJob>;
}

export async function startSimProvider(opts: { port?: number; host?: string; log?: (line: string) => void } = {}): Promise<SimServer> {
  const jobs = new Map<string, SimJob>();
  const timers = new Set<NodeJS.Timeout>();
  const log = opts.log ?? (() => {});

  const commit = (job: SimJob) => {
    if (job.state === "committed") return;
    job.state = "committed";
    job.committedAt = new Date().toISOString();
  };
  const effectOf = (job: SimJob) => ({
    providerJobId: job.jobId,
    effect: job.state === "committed" ? "present" : "absent",
    final: job.state !== "running",
    state: job.state,
    providerOperationId: job.state === "committed" ? `deploy-${job.jobId}` : null,
    committedAt: job.committedAt,
    detail: { reservation_for_run: job.runId, state: job.state, ...(job.detail ? { job: job.detail } : {}) },
  });

  async function onCancel(job: SimJob, res: http.ServerResponse) {
    job.cancelRequests++;
    if (job.mode === "drop") return void res.destroy();
    if (job.mode === "slow") await sleep(job.delayMs);
    if (job.mode === "reject") return send(res, 409, { status: "rejected", state: job.state });
    if (job.mode === "commit_during_cancel") commit(job);
    else if (job.state === "running") {
      job.state = "cancelled";
      job.cancelledAt = new Date().toISOString();
    }
    log(`cancel ${job.jobId} (${job.mode}) -> ${job.state}`);
    send(res, 202, { status: "accepted", state: job.state });
  }

  async function onStatus(job: SimJob, res: http.ServerResponse) {
    job.statusRequests++;
    if (job.mode === "drop") return void res.destroy();
    if (job.mode === "status_down") return send(res, 503, { error: "status endpoint unavailable" });
    if (job.mode === "slow") await sleep(job.delayMs);
    send(res, 200, effectOf(job));
  }

  // Idempotent by its key: the same key again answers as the first time and changes nothing more.
  function onCompensate(job: SimJob, res: http.ServerResponse) {
    job.compensateRequests++;
    if (job.mode === "drop") return void res.destroy();
    if (job.state === "running" || job.state === "cancelled")
      return send(res, 409, { status: "rejected", state: job.state, error: "nothing committed to undo" });
    if (job.compensation === "release" && job.state === "committed") {
      job.state = "compensated";
      job.compensatedAt = new Date().toISOString();
    }
    log(`compensate ${job.jobId} (${job.compensation}) -> ${job.state}`);
    send(res, 202, { status: "accepted", state: job.state });
  }

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://sim");
      const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      const method = req.method ?? "GET";
      const body = method === "POST" ? await readJson(req) : undefined;
      if (body instanceof Error) return send(res, 400, { error: `body: ${body.message}` });
      const find = (id: string | null | undefined) => (id ? jobs.get(id) : undefined);

      if (method === "GET" && url.pathname === "/health") return send(res, 200, { ok: true, jobs: jobs.size });
      if (method === "POST" && url.pathname === "/reset") {
        jobs.clear();
        return send(res, 200, { ok: true });
      }
      if (parts[0] === "jobs" && parts.length === 1) {
        if (method === "GET") return send(res, 200, { jobs: [...jobs.values()] });
        if (method === "POST") {
          const parsed = CreateJob.safeParse(body ?? {});
          if (!parsed.success) return send(res, 400, { error: issue(parsed.error) });
          const p = parsed.data;
          const jobId = p.jobId ?? `job-${randomBytes(6).toString("hex")}`;
          if (jobs.has(jobId)) return send(res, 409, { error: `job ${jobId} exists` });
          const job: SimJob = {
            jobId,
            mode: p.mode,
            compensation: p.compensation,
            compensateRequests: 0,
            compensatedAt: null,
            delayMs: p.delayMs,
            state: "running",
            runId: p.runId ?? null,
            operationId: p.operationId ?? null,
            createdAt: new Date().toISOString(),
            committedAt: null,
            cancelledAt: null,
            cancelRequests: 0,
            statusRequests: 0,
            detail: p.detail ?? null,
          };
          jobs.set(jobId, job);
          if (p.commitAfterMs !== undefined) {
            const t = setTimeout(() => {
              timers.delete(t);
              if (job.state === "running") commit(job);
            }, p.commitAfterMs);
            timers.add(t);
          }
          return send(res, 201, job);
        }
      }
      // Provider protocol without placeholders: the job id travels in the body / query.
      if (method === "POST" && url.pathname === "/cancel") {
        const job = find((body as { providerJobId?: string } | undefined)?.providerJobId);
        return job ? onCancel(job, res) : send(res, 404, { error: "no such job" });
      }
      if (method === "POST" && url.pathname === "/compensate") {
        const job = find((body as { providerJobId?: string } | undefined)?.providerJobId);
        return job ? onCompensate(job, res) : send(res, 404, { error: "no such job" });
      }
      if (method === "GET" && url.pathname === "/status") {
        const job = find(url.searchParams.get("providerJobId"));
        return job ? onStatus(job, res) : send(res, 404, { error: "no such job" });
      }
      if (parts[0] === "jobs" && parts[1]) {
        const job = find(parts[1]);
        if (!job) return send(res, 404, { error: "no such job" });
        const action = parts[2];
        if (method === "GET" && action === undefined) return send(res, 200, job);
        if (method === "GET" && action === "effect") return onStatus(job, res);
        if (method === "POST" && action === "cancel") return onCancel(job, res);
        if (method === "POST" && action === "compensate") return onCompensate(job, res);
        if (method === "POST" && action === "commit") {
          commit(job);
          return send(res, 200, job);
        }
        if (method === "POST" && action === "mode") {
          const parsed = SetMode.safeParse(body ?? {});
          if (!parsed.success) return send(res, 400, { error: issue(parsed.error) });
          job.mode = parsed.data.mode;
          if (parsed.data.delayMs !== undefined) job.delayMs = parsed.data.delayMs;
          if (parsed.data.compensation !== undefined) job.compensation = parsed.data.compensation;
          return send(res, 200, job);
        }
      }
      send(res, 404, { error: `no route ${method} ${url.pathname}` });
    } catch (err) {
      if (!res.headersSent) send(res, 500, { error: (err as Error).message });
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? "127.0.0.1"}:${port}`,
    port,
    jobs,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: http.ServerResponse, status: number, json: unknown) {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(json));
}

function issue(e: z.ZodError): string {
  const i = e.issues[0];
  return i ? `${i.path.join(".") || "body"}: ${i.message}` : "invalid";
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    return new Error("not valid JSON");
  }
}
