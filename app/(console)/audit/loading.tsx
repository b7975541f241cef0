import { LoadingBlock } from "@/components/states";

export default function Loading() {
  return <LoadingBlock label="Loading audit log" rows={6} />;
}
