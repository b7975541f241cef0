// Every console page: the signed-in member's shell. The session is checked here for the shell and
// again by each page and each data call (layouts are not re-rendered on every navigation).
import type { ReactNode } from "react";
import { requireSession } from "@/lib/modules/sessions";
import { isAllowed } from "@/lib/control/authz";
import { navCounts } from "@/lib/actions/nav-counts";
import { Nav } from "@/components/nav";
import { Providers } from "@/components/providers";
import { RouteFocus } from "@/components/route-focus";

export const dynamic = "force-dynamic";

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  const caller = { type: "user" as const, role: s.principal.role };
  // The open-work count is the same as the open-work page's header (lib/modules/stop/console/counts.ts).
  const counts = await navCounts(s.principal);
  const links = [
    { href: "/runs", label: "Runs" },
    { href: "/stops", label: "Stops" },
    { href: "/approvals", label: "Approvals", badge: "approvals" as const },
    { href: "/reconciliations", label: "Open work", badge: "openWork" as const },
    { href: "/policies", label: "Policies" },
    ...(isAllowed(caller, "audit.read") ? [{ href: "/audit", label: "Audit log" }] : []),
    ...(isAllowed(caller, "key.manage") ? [{ href: "/keys", label: "API keys" }] : []),
    ...(isAllowed(caller, "key.manage") ? [{ href: "/webhooks", label: "Webhooks" }] : []),
    ...(isAllowed(caller, "member.manage") ? [{ href: "/people", label: "People" }] : []),
    { href: "/glossary", label: "Glossary" },
  ];
  return (
    <Providers>
      <Nav
        user={{ email: s.user.email, name: s.user.name }}
        team={{ slug: s.team.slug, name: s.team.name, role: s.team.role }}
        teams={s.teams.map((t) => ({ slug: t.slug, name: t.name, role: t.role }))}
        links={links}
        counts={counts}
      />
      <RouteFocus />
      {/* tabIndex -1: the skip link's target takes focus, so the next Tab starts inside the page. */}
      <main id="main" className="page" tabIndex={-1}>
        {children}
      </main>
    </Providers>
  );
}
