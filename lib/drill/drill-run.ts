// `quiesce drill` against a running Quiesce: the drill cases with an in-process worker guard as the
// worker and a second client as "another pod", runs marked as drill runs. Returns the report; the
// command prints it and turns it into an exit code.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { QuiesceClient, QuiesceApiError } from "../agent/sdk/client";
import { SimProviderClient } from "../modules/stop";
import { LocalExecutor } from "./executor";
import { DRILL_CASES, missingNeeds, runCase } from "./index";
import { buildReport, type RunReport } from "./report";
import type { CaseResult, DrillCase, DrillContext } from "./types";

export interface DrillOptions {
  url: string;
  operatorKey: string;
  agentKey?: string;
  /** A second machine key of the team that holds none of the drill's runs. */
  strangerKey?: string;
  simUrl?: string;
  provider: string;
  only?: string[];
  receiptTimeoutMs: number;
  log: (line: string) => void;
}

export class DrillSetupError extends Error {}

export function selectCases(only: string[] | undefined, all: DrillCase[] = DRILL_CASES): DrillCase[] {
  if (!only?.length) return all;
  const unknown = only.filter((n) => !all.some((c) => c.name === n));
  if (unknown.length)
    throw new DrillSetupError(`--only: unknown case(s) ${unknown.join(", ")} (have: ${all.map((c) => c.name).join(", ")})`);
  return all.filter((c) => only.includes(c.name));
}

/** Before any case: the keys authenticate, belong to one team, and the server marks drill runs. */
async function preflight(operator: QuiesceClient, agent: QuiesceClient | undefined, tag: string): Promise<Record<string, unknown>> {
  try {
    await operator.listRuns({ limit: 1 });
  } catch (err) {
    if (err instanceof QuiesceApiError)
      throw new DrillSetupError(`the operator key was refused (${err.status} ${err.code}: ${err.message})`);
    throw new DrillSetupError(`Quiesce is not reachable: ${(err as Error).message}`);
  }
  if (!agent) return { agentKey: false };
  let runId: string;
  try {
    runId = (await agent.createRun({ taskId: `${tag}-preflight`, title: "drill preflight", drill: true })).runId;
  } catch (err) {
    throw new DrillSetupError(`the agent key cannot register a run (${(err as Error).message})`);
  }
  const seen = await operator.getRun(runId).catch(() => null);
  if (!seen) throw new DrillSetupError("the agent key and the operator key belong to different teams");
  if (seen.isDrill !== true)
    throw new DrillSetupError("this Quiesce does not mark drill runs (POST /runs { drill: true }); upgrade it before drilling");
  return { agentKey: true, preflightRun: runId };
}

export async function runDrill(o: DrillOptions, cases: DrillCase[]): Promise<RunReport> {
  const started = new Date();
  const tag = `drill-${started.getTime().toString(36)}-${randomBytes(2).toString("hex")}`;
  const operator = new QuiesceClient({ url: o.url, apiKey: o.operatorKey, timeoutMs: 20_000 });
  const agent = o.agentKey ? new QuiesceClient({ url: o.url, apiKey: o.agentKey, timeoutMs: 20_000 }) : undefined;
  const pre = await preflight(operator, agent, tag);
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), "quiesce-drill-"));
  const worker = o.agentKey ? new LocalExecutor({ url: o.url, apiKey: o.agentKey, label: "in-process worker guard" }) : undefined;
  const pod = o.agentKey ? new LocalExecutor({ url: o.url, apiKey: o.agentKey, label: "second client (another pod)" }) : undefined;
  const ctx: DrillContext = {
    baseUrl: o.url,
    operator,
    agent,
    worker,
    pod,
    sim: o.simUrl
      ? { client: new SimProviderClient(o.simUrl.replace(/\/+$/, "")), url: o.simUrl.replace(/\/+$/, ""), provider: o.provider }
      : undefined,
    stranger: o.strangerKey ? new QuiesceClient({ url: o.url, apiKey: o.strangerKey, timeoutMs: 20_000 }) : undefined,
    markDrill: true,
    tag,
    receiptTimeoutMs: o.receiptTimeoutMs,
    scratchDir,
    log: o.log,
  };
  const results: CaseResult[] = [];
  try {
    for (const c of cases) {
      o.log(`${c.name} …`);
      const r = await runCase(c, ctx, missingNeeds(c.needs, ctx));
      o.log(`${c.name}: ${r.status}${r.note ? ` (${r.note})` : ""}`);
      results.push(r);
    }
  } finally {
    await worker?.close();
    await pod?.close();
    await rm(scratchDir, { recursive: true, force: true }).catch(() => {});
  }
  return buildReport(
    "drill",
    started,
    new Date(),
    { url: o.url, tag, simUrl: o.simUrl ?? null, provider: o.simUrl ? o.provider : null, ...pre },
    results,
  );
}
