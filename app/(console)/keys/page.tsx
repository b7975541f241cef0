import { notFound } from "next/navigation";
import { requireSession } from "@/lib/dal/session";
import { listApiKeys } from "@/lib/dal/api-keys";
import { listTeamMembers } from "@/lib/dal/console/reconciliations";
import { isAllowed } from "@/lib/control/authz";
import { KeysPanel } from "@/components/keys-panel";

export const metadata = { title: "API keys" };

export default async function KeysPage() {
  const s = await requireSession();
  if (!isAllowed({ type: "user", role: s.principal.role }, "key.manage")) notFound();
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
