// `quiesce drill setup`: sets a team aside for drills on the deployment's own database — the team
// (marked is_drill), a drill operator (a user without a console password, role operator), one
// operator key and one agent key for the drill, and optionally the simulated provider's row — and
// returns the secrets once. Idempotent for the team, user, membership and provider; keys are new each time.
import { createApiKey } from "../modules/keys";
import { ensureMembership, ensureTeam, ensureUser } from "../modules/members";
import { ensureProvider, markDrillTeam } from "../modules/stop";
import type { Principal } from "../platform/auth/principal";

const SYSTEM: Principal = { type: "system", name: "drill-setup" };

export interface DrillSetupInput {
  team: string;
  user: string;
  simUrl?: string;
  provider: string;
}
export interface DrillSetupResult {
  teamId: string;
  team: string;
  user: string;
  operatorKey: string;
  agentKey: string;
  provider: string | null;
}

export async function setupDrillTeam(i: DrillSetupInput): Promise<DrillSetupResult> {
  const { team } = await ensureTeam(SYSTEM, { slug: i.team, name: `Drills (${i.team})` });
  await markDrillTeam(SYSTEM, team.id);
  const { user } = await ensureUser(SYSTEM, { email: i.user, name: "Drill operator", passwordHash: null });
  await ensureMembership(SYSTEM, { teamId: team.id, userId: user.id, role: "operator" });
  const operator = await createApiKey(SYSTEM, { teamId: team.id, kind: "operator", name: "drill operator", userId: user.id });
  const agent = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "drill agent" });
  let provider: string | null = null;
  if (i.simUrl) {
    const base = i.simUrl.replace(/\/+$/, "");
    await ensureProvider(SYSTEM, {
      teamId: team.id,
      name: i.provider,
      kind: "simulated",
      cancelUrl: `${base}/cancel`,
      statusUrl: `${base}/status`,
      compensateUrl: `${base}/compensate`,
      quietPeriodSeconds: 2,
      rollbackOwner: "release-oncall",
    });
    provider = i.provider;
  }
  return { teamId: team.id, team: team.slug, user: user.email, operatorKey: operator.secret, agentKey: agent.secret, provider };
}
