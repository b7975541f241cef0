// 403: the member is signed in but their role may not use this page (lib/actions/forbidden.ts). Says
// which role they have, which roles may, and whom to ask — unlike the 404 for what is missing.
import Link from "next/link";
import { headers } from "next/headers";
import { requireSession } from "@/lib/modules/sessions";
import { forbiddenMessage, gatedPage } from "@/lib/control/console-pages";

export default async function Forbidden() {
  const s = await requireSession();
  // proxy.ts passes the requested path on (the 403 boundary gets no props).
  const path = (await headers()).get("x-quiesce-path") ?? "";
  const m = forbiddenMessage(s.principal.role, gatedPage(path));
  return (
    <div className="narrow-box">
      <div className="empty" role="alert">
        <p className="empty-title">403 — {m.title}</p>
        <p>
          You are signed in as {s.user.email}, <strong>{s.principal.role}</strong> in team {s.team.name}. {m.detail}
        </p>
        <p>
          <Link href="/runs">Back to runs</Link>
        </p>
      </div>
    </div>
  );
}
