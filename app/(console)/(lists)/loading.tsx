import { LoadingBlock } from "@/components/states";

export default function Loading() {
  return <LoadingBlock label="Loading" rows={6} />;
}
