// A fleet stop's page: live progress until the fleet receipt (docs/fleet-stop.md).
import { requireSession } from "@/lib/modules/sessions";
import { getStop } from "@/lib/modules/stop";
import { peopleOf } from "@/lib/modules/members";
import { isAllowed } from "@/lib/control/authz";
import { orNotFound } from "@/lib/actions/not-found";
import { FleetStopView } from "@/components/fleet-stop-view";

export const metadata = { title: "Fleet stop" };

export default async function StopPage({ params }: { params: Promise<{ stopId: string }> }) {
  const s = await requireSession();
  const { stopId } = await params;
  const initial = await orNotFound(() => getStop(s.principal, stopId));
  const people = await peopleOf(s.principal, [initial.requestedBy]);
  const canLift = isAllowed({ type: "user", role: s.principal.role }, "fleet.stop");
  return <FleetStopView initial={initial} by={people.get(initial.requestedBy)!} canLift={canLift} />;
}
