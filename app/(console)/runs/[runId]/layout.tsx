// Decides visibility before anything streams, so another team's (or a missing) run is a real 404.
import type { ReactNode } from "react";
import { requireSession } from "@/lib/modules/sessions";
import { assertRunVisible } from "@/lib/modules/runs";
import { orNotFound } from "@/lib/actions/not-found";

export default async function RunLayout({ children, params }: { children: ReactNode; params: Promise<{ runId: string }> }) {
  const s = await requireSession();
  const { runId } = await params;
  await orNotFound(() => assertRunVisible(s.principal, runId));
  return children;
}
