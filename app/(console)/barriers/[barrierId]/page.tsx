import { requireSession } from "@/lib/modules/sessions";
import { barrierView } from "@/lib/modules/runs";
import { orNotFound } from "@/lib/actions/not-found";
import { BarrierView } from "@/components/barrier-view";

export const metadata = { title: "Barrier" };

export default async function BarrierPage({
  params,
  searchParams,
}: {
  params: Promise<{ barrierId: string }>;
  searchParams: Promise<{ follow?: string }>;
}) {
  const s = await requireSession();
  const { barrierId } = await params;
  const data = await orNotFound(() => barrierView(s.principal, barrierId));
  return <BarrierView initial={data} follow={(await searchParams).follow === "1"} />;
}
