import { consoleGet } from "@/lib/actions/console-route";
import { policyConsoleView } from "@/lib/modules/policy";

export const dynamic = "force-dynamic";

// The Policies page's JSON (what it polls, so spend against each budget stays live).
export const GET = consoleGet<Record<string, never>>(async ({ session }) => policyConsoleView(session.principal));
