import { consoleGet } from "@/lib/actions/console-route";
import { runView } from "@/lib/modules/runs";

export const dynamic = "force-dynamic";

export const GET = consoleGet<{ runId: string }>(async ({ session, params }) => runView(session.principal, params.runId));
