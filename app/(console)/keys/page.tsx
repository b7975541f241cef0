import { requireSession } from "@/lib/modules/sessions";
import { requirePage } from "@/lib/actions/forbidden";
import { listApiKeys } from "@/lib/modules/keys";
import { listTeamMembers } from "@/lib/modules/stop";
import { KeysPanel } from "@/components/keys-panel";

export const metadata = { title: "API keys" };

export default async function KeysPage() {
  const s = await requireSession();
  requirePage(s.principal.role, "/keys");
  const [keys, members] = await Promise.all([
    listApiKeys(s.principal, { teamId: s.principal.teamId, includeRevoked: true }),
    listTeamMembers(s.principal),
  ]);
  return (
    <section aria-labelledby="keys-page-title">
      <div className="page-head">
        <h1 id="keys-page-title">API keys</h1>
        <p className="muted">
          Keys for agents, workers, gateways and the CLI of team <strong>{s.team.name}</strong>. Secrets are stored only as hashes.
        </p>
      </div>
      <KeysPanel keys={keys} members={members} me={s.user.id} />
    </section>
  );
}
