// A lifecycle reason as written by the control plane, with the fleet stop it names linked to its page
// ("fleet stop scope_…: why" → "fleet stop <link>: why").
import Link from "next/link";

export function ReasonText({ reason }: { reason: string }) {
  const m = /^fleet stop (scope_\S+?): ([\s\S]*)$/.exec(reason);
  if (!m) return <>“{reason}”</>;
  return (
    <>
      <Link href={`/stops/${m[1]}`}>fleet stop</Link>: “{m[2]}”
    </>
  );
}
