import { notFound } from "next/navigation";
import { requireSession } from "@/lib/dal/session";
import { listMembers } from "@/lib/dal/members";
import { isAllowed } from "@/lib/control/authz";
import { PeoplePanel } from "@/components/people-panel";

export const metadata = { title: "People" };

export default async function PeoplePage() {
  const s = await requireSession();
  if (!isAllowed({ type: "user", role: s.principal.role }, "member.manage")) notFound();
  const members = await listMembers(s.principal, s.principal.teamId);
  return (
    <section aria-labelledby="people-page-title">
      <div className="page-head">
        <h1 id="people-page-title">People</h1>
        <p className="muted">
          Members of team <strong>{s.team.name}</strong>. Every change is audited; removing or disabling someone ends their sessions at
          once.
        </p>
      </div>
      <PeoplePanel members={members} me={s.user.id} />
    </section>
  );
}
