import { LoadingBlock } from "@/components/states";

export default function Loading() {
  return <LoadingBlock label="Loading run" rows={8} />;
}
