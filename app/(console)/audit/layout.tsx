// Decided before anything streams, so a role without audit.read gets a real 404 (not a 200 page
// that says "not found"), exactly as if the page did not exist.
import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { requireSession } from "@/lib/dal/session";
import { isAllowed } from "@/lib/control/authz";

export default async function Layout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  if (!isAllowed({ type: "user", role: s.principal.role }, "audit.read")) notFound();
  return children;
}
