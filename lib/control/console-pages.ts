// The console pages a role may not open, and what the 403 page says about them. Pure: the page layouts
// ask `mayOpen`, the forbidden page asks `forbiddenMessage` with the member's current role.
import { isAllowed, type Action } from "./authz";
import { ROLES, type Role } from "./types";

export interface GatedPage {
  /** The path prefix, as the browser shows it. */
  path: string;
  /** How the page is named in the console's navigation. */
  name: string;
  action: Action;
}

export const GATED_PAGES: readonly GatedPage[] = [
  { path: "/audit", name: "the Audit log", action: "audit.read" },
  { path: "/keys", name: "API keys", action: "key.manage" },
  { path: "/webhooks", name: "Webhooks", action: "key.manage" },
  { path: "/people", name: "People", action: "member.manage" },
];

export function gatedPage(pathname: string): GatedPage | null {
  return GATED_PAGES.find((p) => pathname === p.path || pathname.startsWith(`${p.path}/`)) ?? null;
}

export function mayOpen(role: Role, page: GatedPage): boolean {
  return isAllowed({ type: "user", role }, page.action);
}

const PLURAL: Record<Role, string> = { viewer: "Viewers", operator: "Operators", manager: "Managers", admin: "Admins" };

function list(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** "Viewers can't open Webhooks; ask an admin." plus who can, for the 403 page. */
export function forbiddenMessage(role: Role, page: GatedPage | null): { title: string; detail: string } {
  if (!page) return { title: `${PLURAL[role]} can't open this page`, detail: "Ask an admin of this team if you need it." };
  const who = ROLES.filter((r) => isAllowed({ type: "user", role: r }, page.action)).map((r) => PLURAL[r].toLowerCase());
  return {
    title: `${PLURAL[role]} can't open ${page.name}; ask an admin.`,
    detail: `Only ${list(who)} may open ${page.name}. An admin of this team can change your role on the People page.`,
  };
}
