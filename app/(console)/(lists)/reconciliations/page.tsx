// Open work (docs/console.md#open-work): unknown outcomes and recovery items, filtered by the URL.
import { requireSession } from "@/lib/modules/sessions";
import { openWorkView } from "@/lib/modules/runs";
import { OpenWorkQuery } from "@/lib/schemas/console";
import { isAllowed } from "@/lib/control/authz";
import { OpenWork } from "@/components/open-work";
import { openWorkQueryString } from "@/lib/control/open-work";

export const metadata = { title: "Open work" };

export default async function OpenWorkPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const s = await requireSession();
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  // A malformed filter shows everything open rather than an error page; the JSON endpoint answers 400.
  const parsed = OpenWorkQuery.safeParse(raw);
  const filter = parsed.success ? parsed.data : {};
  const initial = await openWorkView(s.principal, filter);
  const caller = { type: "user" as const, role: s.principal.role };
  const manager = s.principal.role === "manager" || s.principal.role === "admin";
  return (
    <OpenWork
      initial={initial}
      initialQuery={openWorkQueryString((k) => raw[k])}
      me={s.user.id}
      canAssign={isAllowed(caller, "reconciliation.assign")}
      canActOnAny={manager}
    />
  );
}
