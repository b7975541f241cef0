import { LoadingBlock } from "@/components/states";

export default function Loading() {
  return <LoadingBlock label="Loading API keys" rows={6} />;
}
