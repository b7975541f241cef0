// Decided before anything streams: a role without audit.read gets a real 403 that names the role
// (app/(console)/forbidden.tsx), not a 200 page and not a 404.
import type { ReactNode } from "react";
import { requireSession } from "@/lib/modules/sessions";
import { requirePage } from "@/lib/actions/forbidden";

export default async function Layout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  requirePage(s.principal.role, "/audit");
  return children;
}
