// A fleet stop's page: live progress until the fleet receipt (docs/fleet-stop.md).
import { requireSession } from "@/lib/modules/sessions";
import { getStop } from "@/lib/modules/stop";
import { orNotFound } from "@/lib/actions/not-found";
import { FleetStopView } from "@/components/fleet-stop-view";

export const metadata = { title: "Fleet stop" };

export default async function StopPage({ params }: { params: Promise<{ stopId: string }> }) {
  const s = await requireSession();
  const { stopId } = await params;
  const initial = await orNotFound(() => getStop(s.principal, stopId));
  return <FleetStopView initial={initial} />;
}
