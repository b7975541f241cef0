import { requireSession } from "@/lib/dal/session";
import { runsView } from "@/lib/dal/console/views";
import { RunsQuery } from "@/lib/schemas/console";
import { RunsTable } from "@/components/runs-table";
import { isAllowed } from "@/lib/control/authz";

export const metadata = { title: "Runs" };

export default async function RunsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const s = await requireSession();
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const parsed = RunsQuery.safeParse(raw);
  const q = parsed.success ? parsed.data : {};
  const initial = await runsView(s.principal, { ...q, rootsOnly: q.roots });
  const qs = new URLSearchParams();
  for (const k of ["lifecycle", "breaker", "harness", "q", "roots", "page"] as const) {
    const v = raw[k];
    if (typeof v === "string" && v) qs.set(k, v);
  }
  const canStop = isAllowed({ type: "user", role: s.principal.role }, "fleet.stop");
  return <RunsTable initial={initial} initialQuery={qs.toString()} canStop={canStop} teamName={s.team.name} />;
}
