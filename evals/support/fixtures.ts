// The eval run's data, created fresh on its own database: a team with an operator, a viewer and a
// manager, one key of each kind the cases use, the simulated provider's row; another team (for the
// cross-team refusal); and a team of its own for the engine-crash case, whose barriers only the
// engines started by that case work on.
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { ensureMembership, ensureTeam, ensureUser } from "../../lib/modules/members/admin-directory";
import { ensureProvider } from "../../lib/modules/stop";
import type { Principal } from "../../lib/platform/auth/principal";
import type { Role } from "../../lib/control/types";

const SYSTEM: Principal = { type: "system", name: "evals" };
export const SIM_PROVIDER = "eval-sim";

export interface EvalTeam {
  teamId: string;
  slug: string;
  users: Partial<Record<Role, { id: string; email: string }>>;
  keys: { agent?: string; worker?: string; operator?: string; viewer?: string; admin?: string };
}

async function team(slug: string, roles: Role[]): Promise<EvalTeam> {
  const { team: t } = await ensureTeam(SYSTEM, { slug, name: `Evals ${slug}` });
  const users: EvalTeam["users"] = {};
  for (const role of roles) {
    const { user } = await ensureUser(SYSTEM, { email: `${role}@${slug}.evals.invalid`, name: `${slug} ${role}`, passwordHash: null });
    await ensureMembership(SYSTEM, { teamId: t.id, userId: user.id, role });
    users[role] = { id: user.id, email: user.email };
  }
  return { teamId: t.id, slug, users, keys: {} };
}

async function provider(teamId: string, simUrl: string, o: { timeoutMs: number; settleDeadlineMs: number; quietPeriodSeconds: number }) {
  await ensureProvider(SYSTEM, {
    teamId,
    name: SIM_PROVIDER,
    kind: "simulated",
    cancelUrl: `${simUrl}/jobs/{providerJobId}/cancel`,
    statusUrl: `${simUrl}/jobs/{providerJobId}/effect`,
    compensateUrl: `${simUrl}/jobs/{providerJobId}/compensate`,
    rollbackOwner: "release-oncall",
    ...o,
  });
}

export interface Fixtures {
  main: EvalTeam;
  other: EvalTeam;
  crash: EvalTeam;
  /** A team of its own for the policy cases: its policy changes no other case's gate. */
  policy: EvalTeam;
}

export async function createFixtures(simUrl: string, tag: string): Promise<Fixtures> {
  const main = await team(`evals-${tag}`, ["operator", "viewer", "manager"]);
  const key = async (t: EvalTeam, kind: "agent" | "worker" | "operator", role?: Role) =>
    (
      await createApiKey(SYSTEM, {
        teamId: t.teamId,
        kind,
        name: `evals ${kind}${role ? ` (${role})` : ""}`,
        userId: role ? t.users[role]!.id : undefined,
      })
    ).secret;
  main.keys = {
    agent: await key(main, "agent"),
    worker: await key(main, "worker"),
    operator: await key(main, "operator", "operator"),
    viewer: await key(main, "operator", "viewer"),
  };
  // Settles fast: a status endpoint that stays down is "unknown" after 3 s; 1 s of quiet.
  await provider(main.teamId, simUrl, { timeoutMs: 2000, settleDeadlineMs: 3000, quietPeriodSeconds: 1 });

  const other = await team(`evals-other-${tag}`, ["operator"]);
  other.keys = { operator: await key(other, "operator", "operator") };

  const crash = await team(`evals-crash-${tag}`, ["operator"]);
  crash.keys = { agent: await key(crash, "agent"), operator: await key(crash, "operator", "operator") };
  // Patient: the engine that is killed must be caught holding an unanswered cancel request.
  await provider(crash.teamId, simUrl, { timeoutMs: 20_000, settleDeadlineMs: 30_000, quietPeriodSeconds: 0 });
  const policy = await team(`evals-policy-${tag}`, ["admin", "operator", "viewer"]);
  policy.keys = {
    agent: await key(policy, "agent"),
    worker: await key(policy, "worker"),
    operator: await key(policy, "operator", "operator"),
    viewer: await key(policy, "operator", "viewer"),
    admin: await key(policy, "operator", "admin"),
  };
  return { main, other, crash, policy };
}
