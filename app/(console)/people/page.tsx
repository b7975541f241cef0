import { requireSession } from "@/lib/modules/sessions";
import { requirePage } from "@/lib/actions/forbidden";
import { listMembers } from "@/lib/modules/members";
import { PeoplePanel } from "@/components/people-panel";

export const metadata = { title: "People" };

export default async function PeoplePage() {
  const s = await requireSession();
  requirePage(s.principal.role, "/people");
  const members = await listMembers(s.principal, s.principal.teamId);
  return (
    <section aria-labelledby="people-page-title">
      <div className="page-head">
        <h1 id="people-page-title">People</h1>
        <p className="muted">
          Members of team <strong>{s.team.name}</strong>. Every change is audited; removing or disabling someone ends their sessions at
          once. Disabling in this team leaves their other teams alone; disabling everywhere needs admin of every team they belong to.
        </p>
      </div>
      <PeoplePanel members={members} me={s.user.id} />
    </section>
  );
}
