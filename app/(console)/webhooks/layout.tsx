// Admins only (the same permission as API keys): anyone else gets a real 404 before anything streams.
import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { requireSession } from "@/lib/dal/session";
import { isAllowed } from "@/lib/control/authz";

export default async function Layout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  if (!isAllowed({ type: "user", role: s.principal.role }, "key.manage")) notFound();
  return children;
}
