"use client";
// The console header: where you are, which team you act for, with which role, and the way out.
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { signOut } from "next-auth/react";
import { useState, useTransition } from "react";
import { useQuery } from "@tanstack/react-query";
import { getJson, useLiveStatus } from "./providers";
import type { NavCounts } from "@/lib/actions/nav-counts";
import { TimeZoneToggle } from "./time";
import { switchTeamAction } from "@/app/(console)/actions";

export interface NavProps {
  user: { email: string; name: string };
  team: { slug: string; name: string; role: string };
  teams: { slug: string; name: string; role: string }[];
  links: { href: string; label: string; badge?: keyof NavCounts }[];
  /** The badges as the server read them; polled (and refreshed by every control event) while the page stays open. */
  counts: NavCounts;
}

export function Nav({ user, team, teams, links, counts }: NavProps) {
  const live = useQuery({ queryKey: ["nav-counts"], queryFn: () => getJson<NavCounts>("/api/console/counts"), initialData: counts });
  const badges = live.data ?? counts;
  const pathname = usePathname();
  const router = useRouter();
  const liveStatus = useLiveStatus();
  const [pending, start] = useTransition();
  const [signingOut, setSigningOut] = useState(false);
  return (
    <header className="topbar">
      <a className="skip-link" href="#main">
        Skip to main content
      </a>
      <Link href="/runs" className="brand" aria-label="Quiesce home">
        <span className="brand-mark" aria-hidden>
          ◼
        </span>{" "}
        Quiesce
      </Link>
      <nav aria-label="Main">
        <ul className="nav-links">
          {links.map((l) => {
            const active = pathname === l.href || pathname.startsWith(`${l.href}/`);
            return (
              <li key={l.href}>
                <Link href={l.href} aria-current={active ? "page" : undefined} className={active ? "active" : undefined}>
                  {l.label}
                  {l.badge && badges[l.badge] ? (
                    <span className="count" aria-label={`${badges[l.badge]} open`}>
                      {badges[l.badge]}
                    </span>
                  ) : null}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <div className="topbar-right">
        <span className={`live live-${liveStatus}`} role="status" title="Live updates from the control plane">
          <span className="live-dot" aria-hidden />
          {liveStatus === "live" ? "Live" : liveStatus === "connecting" ? "Connecting…" : "Reconnecting…"}
        </span>
        <TimeZoneToggle />
        {teams.length > 1 ? (
          <label className="team-switch">
            <span className="sr-only">Team</span>
            <select
              value={team.slug}
              disabled={pending}
              onChange={(e) =>
                start(async () => {
                  await switchTeamAction({ slug: e.target.value });
                  router.refresh();
                })
              }
            >
              {teams.map((t) => (
                <option key={t.slug} value={t.slug}>
                  {t.name} ({t.role})
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span className="team" title={`team ${team.slug}`}>
            {team.name}
          </span>
        )}
        <span className={`role role-${team.role}`} title="Your role in this team">
          {team.role}
        </span>
        <Link href="/account" className="user" title={`${user.name}: your account and password`}>
          {user.email}
        </Link>
        <button
          type="button"
          className="btn btn-small btn-ghost"
          disabled={signingOut}
          onClick={async () => {
            setSigningOut(true);
            await signOut({ redirect: false });
            router.push("/signin");
            router.refresh();
          }}
        >
          {signingOut ? "Signing out…" : "Sign out"}
        </button>
      </div>
    </header>
  );
}
