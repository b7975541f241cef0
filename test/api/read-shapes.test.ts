// One read shape per concept (docs/design/read-shapes.md): for one stopped run tree with a settlement,
// an open reconciliation and a receipt, each concept is read through the machine API, the console's
// read function and the CLI (a real process), and what they share is deep-equal and parses with the
// concept's one zod schema. A reader that renames or recomputes a field fails here.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import type { Principal } from "../../lib/platform/auth/principal";
import { killRun } from "../../lib/modules/stop/kill";
import { issueReceiptTx, lockBarrierTx } from "../../lib/modules/stop/internal/receipts";
import { getConsoleBarrier } from "../../lib/modules/stop/console/barrier";
import { getConsoleReceipt } from "../../lib/modules/stop/console/receipt";
import { listOpenWork } from "../../lib/modules/stop/console/reconciliations";
import { listConsoleRuns } from "../../lib/modules/runs/console/runs";
import { getRunDetail } from "../../lib/modules/runs/console/run-detail";
import { Reconciliation, ReceiptRef, Settlement, StopReceiptSchema } from "../../lib/schemas/barriers";
import { RunSummary, RunView } from "../../lib/schemas/runs";
import { makeRun } from "../support/fixtures";
import { addOp } from "../barrier/fixtures";
import { runCli } from "../cli/run-cli";
import { makeWorld, raw, type World } from "./fixtures";

let w: World;
let viewer: Principal;
let slug: string;
let rootId: string;
let childId: string;
let barrierId: string;

/** The fields every reader shares: what the concept's schema names (a reader may add fields, never rename one). */
const shared = <T>(schema: { parse: (x: unknown) => T }, x: unknown): T => schema.parse(x);

beforeAll(async () => {
  w = await makeWorld();
  const team = await prisma().team.findUniqueOrThrow({ where: { id: w.a.teamId }, select: { slug: true } });
  slug = team.slug;
  const u = await prisma().user.findUniqueOrThrow({ where: { id: w.a.users.viewer }, select: { email: true } });
  viewer = { type: "user", userId: w.a.users.viewer, email: u.email, teamId: w.a.teamId, role: "viewer" };
  const root = await makeRun(w.a.teamId, { title: "read shapes" });
  // A breaker tripped long ago: past its cool-down every reader must show it as the gate sees it.
  const child = await makeRun(w.a.teamId, { title: "child", breaker: "open", breakerChangedAt: new Date(Date.now() - 3_600_000) }, root);
  rootId = root.runId;
  childId = child.runId;
  // One call in flight at the kill (its settlement), one whose outcome was already unknown (an open reconciliation).
  await addOp(w.a.teamId, child, {
    state: "running",
    tool: "deploy",
    providerName: "deployer",
    providerJobId: "job-1",
    operationId: `rs-run-${rootId}`,
  });
  const lost = await addOp(w.a.teamId, child, { state: "running", tool: "mcp.call", operationId: `rs-lost-${rootId}` });
  await prisma().operation.update({
    where: { id: lost.rowId },
    data: { state: "aborted_unknown", stateReason: "transport_lost", finishedAt: new Date() },
  });
  const operator = await prisma().user.findUniqueOrThrow({ where: { id: w.a.users.operator }, select: { email: true } });
  ({ barrierId } = await killRun(
    { type: "user", userId: w.a.users.operator, email: operator.email, teamId: w.a.teamId, role: "operator" },
    rootId,
    "read shapes",
  ));
  await prisma().$transaction(async (tx) => {
    await lockBarrierTx(tx, barrierId);
    await issueReceiptTx(tx, barrierId);
  });
}, 60_000);

afterAll(async () => {
  await w?.close();
});

const api = async (path: string) => {
  const r = await raw(w.server.url, "GET", path, { key: w.a.keys.operator });
  expect(r.status, path).toBe(200);
  return r.json;
};
const cli = async (args: string[]) => {
  const r = await runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};
const byOperation = <T extends { operationId: string }>(xs: T[]) => [...xs].sort((a, b) => a.operationId.localeCompare(b.operationId));

describe("one read shape per concept", () => {
  test("settlements: the API, the console's barrier page and the SDK the CLI speaks read the same settlement", async () => {
    const fromApi = (await api(`/api/v1/barriers/${barrierId}`)).settlements as unknown[];
    const fromConsole = (await getConsoleBarrier(viewer, barrierId)).settlements;
    const fromSdk = (await w.client(w.a.keys.operator).getBarrier(barrierId)).settlements as unknown[];
    const a = byOperation(fromApi.map((x) => shared(Settlement, x)));
    expect(a).toHaveLength(2);
    expect(a.find((s) => s.provider === "deployer")?.barrierId).toBe(barrierId);
    expect(a.find((s) => s.outcome === "unknown")?.reconciliation?.status).toBe("assigned"); // open, with its default owner
    expect(byOperation(fromConsole.map((x) => shared(Settlement, x)))).toEqual(a);
    expect(byOperation(fromSdk.map((x) => shared(Settlement, x)))).toEqual(a);
  });

  test("reconciliations: the console's queue and `quiesce reconcile list --json` read the same reconciliation", async () => {
    const fromConsole = (await listOpenWork(viewer, { status: "open" })).reconciliations;
    const fromCli = JSON.parse(await cli(["reconcile", "list", "--team", slug, "--json"])) as unknown[];
    const c = fromConsole.map((x) => shared(Reconciliation, x));
    expect(c).toHaveLength(1);
    expect(c[0]).toMatchObject({
      operationId: `rs-lost-${rootId}`,
      cause: expect.any(String),
      // Unknown before the kill, so no settlement: the barrier over its run still lists it, in the same words.
      barrierId,
      whyUnknown: "its executor gave up on the call and could not say whether it took effect (its report was lost in transport)",
    });
    const listed = (await getConsoleBarrier(viewer, barrierId)).sentences.join(" ");
    expect(listed).toContain(`${c[0]!.operationId} unknown — ${c[0]!.whyUnknown}`);
    // And a list of that barrier's unknowns has it.
    const under = JSON.parse(await cli(["reconcile", "list", "--team", slug, "--barrier", barrierId, "--json"])) as { id: string }[];
    expect(under.map((x) => x.id)).toContain(c[0]!.id);
    expect(fromCli.map((x) => shared(Reconciliation, x))).toEqual(c);
    // The barrier's settlement names the same reconciliation.
    const s = (await getConsoleBarrier(viewer, barrierId)).settlements.find((x) => x.operationId === c[0]!.operationId);
    expect(s?.reconciliation?.reconciliationId).toBe(c[0]!.id);
  });

  test("receipts: the API, the console's receipt page and `quiesce receipt --json` read the same body and versions", async () => {
    const fromApi = await api(`/api/v1/barriers/${barrierId}/receipt`);
    const fromConsole = (await getConsoleReceipt(viewer, barrierId))!;
    const fromCli = JSON.parse(await cli(["receipt", barrierId, "--json"]));
    const body = shared(StopReceiptSchema, fromApi);
    expect(shared(StopReceiptSchema, fromConsole.body)).toEqual(body);
    expect(shared(StopReceiptSchema, fromCli)).toEqual(body);
    // Its versions, as the barrier view lists them and as the console's barrier and receipt pages do.
    const versions = ((await api(`/api/v1/barriers/${barrierId}`)).receipts as unknown[]).map((x) => shared(ReceiptRef, x));
    expect(versions).toHaveLength(1);
    expect(fromConsole.versions.map((x) => shared(ReceiptRef, x))).toEqual(versions);
    expect((await getConsoleBarrier(viewer, barrierId)).receipts.map((x) => shared(ReceiptRef, x))).toEqual(versions);
  });

  test("runs: the API, the console's runs list and run page, and `quiesce runs list|show` read the same run", async () => {
    const fromApi = await api(`/api/v1/runs/${rootId}`);
    const view = shared(RunView, fromApi);
    const child = view.children.find((c) => c.runId === childId)!;
    expect(child.breaker).toBe("half_open");
    const apiList = (await api(`/api/v1/runs?limit=200`)).runs as unknown[];
    const summaries = new Map(apiList.map((x) => shared(RunSummary, x)).map((r) => [r.runId, r]));
    expect(summaries.get(childId)).toEqual(child);

    const list = await listConsoleRuns(viewer, { pageSize: 100 });
    for (const row of list.items) expect(shared(RunSummary, row)).toEqual(summaries.get(shared(RunSummary, row).runId));
    const detail = await getRunDetail(viewer, rootId);
    expect(detail.tree).toHaveLength(2);
    for (const node of detail.tree) expect(shared(RunSummary, node)).toEqual(summaries.get(shared(RunSummary, node).runId));
    const state = RunView.omit({ children: true, leases: true });
    expect(shared(state, detail.run)).toEqual(shared(state, fromApi));

    const flags = ["--url", w.server.url, "--key", w.a.keys.operator, "--json"];
    expect(shared(RunView, JSON.parse(await cli(["runs", "show", rootId, ...flags])))).toEqual(view);
    const cliList = JSON.parse(await cli(["runs", "list", "--limit", "200", ...flags])).runs as unknown[];
    expect(new Map(cliList.map((x) => shared(RunSummary, x)).map((r) => [r.runId, r]))).toEqual(summaries);
  });
});
