// The receipt's answer in one sentence a person can repeat, derived from the signed body alone (so it
// cannot disagree with the tables below it): "Stopped and quiet: 3 calls settled by deploy-sim, 1
// cancelled before it started" / "Not yet quiet: 1 outcome unknown — `deployment.reserve_preview`
// op_…, owned by Ana Ruiz". People are named by the labels given (name and e-mail), never by id.
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export interface OpenItem {
  operationId: string;
  tool: string | null;
  owner: string;
}

/** What is still open: every reconciliation of the body not resolved, with its tool and owner. */
export function openItems(body: Obj, name: (actor: string) => string): OpenItem[] {
  const tools = new Map(
    (Array.isArray(body.in_flight) ? body.in_flight : [])
      .filter(isObj)
      .map((o) => [String(o.operation_id), o.tool ? String(o.tool) : null]),
  );
  return (Array.isArray(body.reconciliation) ? body.reconciliation : [])
    .filter(isObj)
    .filter((r) => r.status !== "resolved")
    .map((r) => ({
      operationId: String(r.operation_id),
      tool: tools.get(String(r.operation_id)) ?? null,
      owner: name(String(r.assignee)),
    }));
}

export function receiptHeadline(decision: string, body: Obj, name: (actor: string) => string): string {
  const open = openItems(body, name);
  if (decision !== "stopped_and_quiet" || open.length > 0) {
    if (open.length === 0) return "Not yet quiet: the stop has items still open (listed below).";
    const first = open[0]!;
    const what = `${first.tool ? `\`${first.tool}\` ` : ""}${first.operationId}, owned by ${first.owner}`;
    return `Not yet quiet: ${plural(open.length, "outcome")} unknown — ${what}${open.length > 1 ? `, and ${open.length - 1} more below` : ""}.`;
  }
  const parts: string[] = [];
  const byProvider = new Map<string, number>();
  let byPerson = 0;
  let byExecutor = 0;
  for (const o of (Array.isArray(body.in_flight) ? body.in_flight : []).filter(isObj)) {
    if (o.settled_by === "provider")
      byProvider.set(String(o.provider ?? "the provider"), (byProvider.get(String(o.provider ?? "the provider")) ?? 0) + 1);
    else if (o.settled_by === "person") byPerson++;
    else byExecutor++;
  }
  for (const [provider, n] of byProvider) parts.push(`${plural(n, "call")} settled by ${provider}`);
  if (byExecutor) parts.push(`${plural(byExecutor, "call")} reported by its executor`);
  if (byPerson) parts.push(`${plural(byPerson, "call")} settled by a person`);
  const work = isObj(body.work) ? body.work : {};
  const queued = Number(work.queued_cancelled ?? 0);
  if (queued) parts.push(`${queued} cancelled before ${queued === 1 ? "it" : "they"} started`);
  return `Stopped and quiet: ${parts.length ? parts.join(", ") : "nothing was in flight"}.`;
}
