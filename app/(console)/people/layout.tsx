// Decided before anything streams, so a role without member.manage gets a real 404.
import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { requireSession } from "@/lib/dal/session";
import { isAllowed } from "@/lib/control/authz";

export default async function Layout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  if (!isAllowed({ type: "user", role: s.principal.role }, "member.manage")) notFound();
  return children;
}
