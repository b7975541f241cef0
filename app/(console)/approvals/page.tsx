// Approvals (docs/approvals-console.md): the team's open approval cards and its recent decisions, live.
import { requireSession } from "@/lib/modules/sessions";
import { listApprovals } from "@/lib/modules/approvals";
import { ApprovalsQueue } from "@/components/approvals-queue";

export const metadata = { title: "Approvals" };

export default async function ApprovalsPage() {
  const s = await requireSession();
  // The same queries the page polls (components/approvals-queue.tsx OPEN_URL, DECIDED_URL).
  const [open, decided] = await Promise.all([
    listApprovals(s.principal, { state: "open" }),
    listApprovals(s.principal, { state: "decided", limit: 50 }),
  ]);
  return <ApprovalsQueue initialOpen={{ approvals: open }} initialDecided={{ approvals: decided }} />;
}
