// The fleet-stop page's live progress (docs/fleet-stop.md): moves an interrupted fan-out on, then reads.
import { consoleGet } from "@/lib/actions/console-route";
import { advanceStop, getStop } from "@/lib/dal/stops";

export const dynamic = "force-dynamic";

export const GET = consoleGet<{ stopId: string }>(async ({ session, params }) => {
  await advanceStop(session.principal, params.stopId);
  return getStop(session.principal, params.stopId);
});
