// Visibility is decided before anything streams: another team's (or a missing) barrier is a real 404.
import type { ReactNode } from "react";
import { requireSession } from "@/lib/modules/sessions";
import { receiptBarrier } from "@/lib/modules/stop";
import { orNotFound } from "@/lib/actions/not-found";

export default async function ReceiptLayout({ children, params }: { children: ReactNode; params: Promise<{ barrierId: string }> }) {
  const s = await requireSession();
  const { barrierId } = await params;
  await orNotFound(() => receiptBarrier(s.principal, barrierId));
  return children;
}
