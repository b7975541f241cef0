import { requireSession } from "@/lib/modules/sessions";
import { reconciliationsView } from "@/lib/modules/runs";
import { ReconciliationsQuery } from "@/lib/schemas/console";
import { isAllowed } from "@/lib/control/authz";
import { ReconciliationQueue } from "@/components/reconciliation-queue";
import { RecoveryQueue } from "@/components/recovery-queue";
import { listRecoveries, listTeamMembers } from "@/lib/modules/stop";

export const metadata = { title: "Reconciliations" };

export default async function ReconciliationsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const s = await requireSession();
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const parsed = ReconciliationsQuery.safeParse(raw);
  const filter = parsed.success ? parsed.data : {};
  const initial = await reconciliationsView(s.principal, filter);
  const qs = new URLSearchParams([...(raw.status ? [["status", raw.status]] : []), ...(raw.mine ? [["mine", "1"]] : [])] as [
    string,
    string,
  ][]).toString();
  const caller = { type: "user" as const, role: s.principal.role };
  const [recoveries, members] = await Promise.all([listRecoveries(s.principal, { state: "open" }), listTeamMembers(s.principal)]);
  const canAssign = isAllowed(caller, "reconciliation.assign");
  const manager = s.principal.role === "manager" || s.principal.role === "admin";
  return (
    <>
      <ReconciliationQueue initial={initial} initialQuery={qs} me={s.user.id} canAssign={canAssign} canResolveAny={manager} />
      <RecoveryQueue items={recoveries} members={members} me={s.user.id} canAssign={canAssign} canActOnAny={manager} />
    </>
  );
}
