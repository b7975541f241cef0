// Console pages a role may not use answer a real 403 (Next.js forbidden(), decided in the page's
// layout before anything streams) whose page names the role and who may open it
// (app/(console)/forbidden.tsx, lib/control/console-pages.ts). A 404 stays for what is missing or
// another team's (lib/actions/not-found.ts).
import "server-only";
import { forbidden } from "next/navigation";
import { GATED_PAGES, mayOpen } from "../control/console-pages";
import type { Role } from "../control/types";

export function requirePage(role: Role, path: (typeof GATED_PAGES)[number]["path"]): void {
  const page = GATED_PAGES.find((p) => p.path === path);
  if (!page || !mayOpen(role, page)) forbidden();
}
