import { requireSession } from "@/lib/modules/sessions";
import { runsView } from "@/lib/modules/runs";
import { listSavedViews } from "@/lib/modules/runs";
import { parseRunsQuery } from "@/lib/schemas/runs-list";
import { RunsTable } from "@/components/runs-table";
import { isAllowed } from "@/lib/control/authz";
import { getTeamStopSettings } from "@/lib/modules/members";

export const metadata = { title: "Runs" };

export default async function RunsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const s = await requireSession();
  // Every filter lives in the URL; a parameter that does not parse is ignored and named on the page.
  const parsed = parseRunsQuery(await searchParams);
  const [initial, views, settings] = await Promise.all([
    runsView(s.principal, parsed),
    listSavedViews(s.principal),
    getTeamStopSettings(s.principal, s.team.id),
  ]);
  const canStop = isAllowed({ type: "user", role: s.principal.role }, "fleet.stop");
  const pauseReclaim =
    settings.pausePolicySeconds !== null ? { seconds: settings.pausePolicySeconds, action: settings.pauseReclaimAction } : null;
  return <RunsTable initial={initial} initialViews={views} canStop={canStop} teamName={s.team.name} pauseReclaim={pauseReclaim} />;
}
