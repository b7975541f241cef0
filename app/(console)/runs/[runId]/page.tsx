import type { Metadata } from "next";
import { requireSession } from "@/lib/modules/sessions";
import { runView } from "@/lib/modules/runs";
import { orNotFound } from "@/lib/actions/not-found";
import { isAllowed } from "@/lib/control/authz";
import { RunView } from "@/components/run-view";

export async function generateMetadata({ params }: { params: Promise<{ runId: string }> }): Promise<Metadata> {
  return { title: `Run ${(await params).runId}` };
}

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const s = await requireSession();
  const { runId } = await params;
  const data = await orNotFound(() => runView(s.principal, runId));
  const caller = { type: "user" as const, role: s.principal.role };
  const can = {
    pause: isAllowed(caller, "run.pause"),
    resume: isAllowed(caller, "run.resume"),
    kill: isAllowed(caller, "run.kill"),
    trip: isAllowed(caller, "breaker.trip"),
    reset: isAllowed(caller, "breaker.reset"),
  };
  return <RunView initial={data} can={can} />;
}
