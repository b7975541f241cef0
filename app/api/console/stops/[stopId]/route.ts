// The fleet-stop page's live progress (docs/fleet-stop.md). Read-only: the barrier engine does the work.
import { consoleGet } from "@/lib/actions/console-route";
import { getStop } from "@/lib/modules/stop";

export const dynamic = "force-dynamic";

export const GET = consoleGet<{ stopId: string }>(async ({ session, params }) => getStop(session.principal, params.stopId));
