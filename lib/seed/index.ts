// The demo data a first `npm start` sets up (docs/architecture.md#who-uses-it): team `demo` with one user per role, one API
// key of each kind, the simulated deployment provider, and a second team `other` so that cross-team
// isolation has something to hide. Idempotent: a second run creates nothing, changes nothing and
// returns no secrets (they exist only as hashes, and in .quiesce/demo-keys.json from the first run).
import { randomBytes } from "node:crypto";
import { hashPassword, verifyPassword } from "../platform/auth/password";
import { authenticateKey, createApiKey } from "../modules/keys";
import { ensureMembership, ensureTeam, ensureUser, setUserPasswordHash, type TeamRow } from "../modules/members";
import { ensureProvider } from "../modules/stop";
import type { Principal } from "../platform/auth/principal";
import { setTeamStopSettings } from "../modules/members";
import type { KeyKind, Role } from "../control/types";
import { defaultDemoKeysPath, readDemoKeys, writeDemoKeys, type DemoKeyRole, type DemoKeys } from "./demo-keys-file";
import { setting } from "../platform/config";
import { simProviderUrl } from "./sim-url";

export const DEMO_TEAM = { slug: "demo", name: "Demo team" } as const;
export const DEMO_PAUSE_POLICY_SECONDS = 900;
export const OTHER_TEAM = { slug: "other", name: "Other team" } as const;
export const DEMO_DOMAIN = "demo.quiesce.dev";
export const DEMO_USERS: { email: string; name: string; role: Role }[] = [
  { email: `admin@${DEMO_DOMAIN}`, name: "Ada Admin", role: "admin" },
  { email: `operator@${DEMO_DOMAIN}`, name: "Oscar Operator", role: "operator" },
  { email: `manager@${DEMO_DOMAIN}`, name: "Mira Manager", role: "manager" },
  { email: `viewer@${DEMO_DOMAIN}`, name: "Victor Viewer", role: "viewer" },
];
export const DEMO_PROVIDER = {
  name: "deploy-sim",
  kind: "simulated",
  quietPeriodSeconds: 5,
  rollbackOwner: "release-oncall",
} as const;

interface KeySpec {
  role: DemoKeyRole;
  team: "demo" | "other";
  kind: KeyKind;
  name: string;
  userEmail?: string;
}
const KEY_SPECS: KeySpec[] = [
  { role: "agent", team: "demo", kind: "agent", name: "demo agent" },
  { role: "worker", team: "demo", kind: "worker", name: "demo worker" },
  { role: "gateway", team: "demo", kind: "gateway", name: "demo gateway" },
  { role: "operator", team: "demo", kind: "operator", name: "demo operator", userEmail: `operator@${DEMO_DOMAIN}` },
  { role: "otherAgent", team: "other", kind: "agent", name: "other-team agent" },
];

export interface SeedKey {
  role: DemoKeyRole;
  kind: KeyKind;
  team: string;
  id: string;
  name: string;
  created: boolean;
  secret: string;
}
export interface SeedResult {
  teams: { slug: string; id: string; created: boolean }[];
  users: { email: string; role: Role; created: boolean; passwordReset: boolean }[];
  /** Set only when this run created (or reset) users with it: print it once. */
  password: string | null;
  keys: SeedKey[];
  provider: { name: string; url: string; created: boolean; updated: boolean };
  keysFile: string;
  /** Anything at all was written. */
  changed: boolean;
}

const SYSTEM: Principal = { type: "system", name: "seed" };

export function generatePassword(): string {
  return `demo-${randomBytes(9).toString("base64url")}`;
}

/** A key from the file is reused only if it still authenticates as the same team and kind. */
async function stillValid(secret: string | undefined, teamId: string, kind: KeyKind): Promise<string | null> {
  if (!secret) return null;
  const p = await authenticateKey(secret);
  return p && p.teamId === teamId && p.kind === kind ? p.keyId : null;
}

export async function seedDemo(opts: { keysFile?: string; password?: string; simPort?: number } = {}): Promise<SeedResult> {
  const keysFile = opts.keysFile ?? defaultDemoKeysPath();
  const explicitPassword = opts.password ?? setting("QUIESCE_DEMO_PASSWORD") ?? null;
  const prior = readDemoKeys(keysFile);

  const demo = await ensureTeam(SYSTEM, DEMO_TEAM);
  // Pause reclaim is off by default; the demo team turns it on (a pause longer than 15 min is killed).
  if (demo.created) await setTeamStopSettings(SYSTEM, demo.team.id, { pausePolicySeconds: DEMO_PAUSE_POLICY_SECONDS });
  const other = await ensureTeam(SYSTEM, OTHER_TEAM);
  const teamIds: Record<"demo" | "other", TeamRow> = { demo: demo.team, other: other.team };

  const password = explicitPassword ?? generatePassword();
  let passwordHash: string | null = null;
  const users: SeedResult["users"] = [];
  const userIds = new Map<string, string>();
  for (const u of DEMO_USERS) {
    passwordHash ??= await hashPassword(password);
    const { user, created } = await ensureUser(SYSTEM, { email: u.email, name: u.name, passwordHash });
    let passwordReset = false;
    // An explicit QUIESCE_DEMO_PASSWORD is the developer asking for that password: honour it.
    if (!created && explicitPassword && !(await verifyPassword(explicitPassword, user.passwordHash))) {
      await setUserPasswordHash(SYSTEM, user.id, passwordHash);
      passwordReset = true;
    }
    await ensureMembership(SYSTEM, { teamId: demo.team.id, userId: user.id, role: u.role });
    userIds.set(u.email, user.id);
    users.push({ email: u.email, role: u.role, created, passwordReset });
  }
  const passwordShown = users.some((u) => u.created || u.passwordReset) ? password : null;

  // The row follows the simulator's port: a start on another QUIESCE_PROVIDER_SIM_PORT repoints it.
  const simUrl = simProviderUrl(opts.simPort);
  const provider = await ensureProvider(SYSTEM, {
    teamId: demo.team.id,
    ...DEMO_PROVIDER,
    cancelUrl: `${simUrl}/cancel`,
    statusUrl: `${simUrl}/status`,
    compensateUrl: `${simUrl}/compensate`,
    // The simulator's own record of a job: what a person reconciling an unknown outcome opens.
    jobUrl: `${simUrl}/jobs/{providerJobId}`,
    updateUrls: true,
  });

  const keys: SeedKey[] = [];
  for (const spec of KEY_SPECS) {
    const teamId = teamIds[spec.team].id;
    const fromFile = prior?.keys[spec.role];
    const reusedId = await stillValid(fromFile?.secret, teamId, spec.kind);
    if (reusedId && fromFile) {
      keys.push({
        role: spec.role,
        kind: spec.kind,
        team: spec.team,
        id: reusedId,
        name: spec.name,
        created: false,
        secret: fromFile.secret,
      });
      continue;
    }
    const userId = spec.userEmail ? userIds.get(spec.userEmail) : undefined;
    const k = await createApiKey(SYSTEM, { teamId, kind: spec.kind, name: spec.name, userId });
    keys.push({ role: spec.role, kind: spec.kind, team: spec.team, id: k.id, name: spec.name, created: true, secret: k.secret });
  }

  const anyKeyCreated = keys.some((k) => k.created);
  if (anyKeyCreated || passwordShown !== null || !prior) {
    const data: DemoKeys = {
      team: DEMO_TEAM.slug,
      keys: Object.fromEntries(keys.map((k) => [k.role, { id: k.id, secret: k.secret }])),
      users: DEMO_USERS.map((u) => ({ email: u.email, role: u.role })),
      // Keep the password recorded by an earlier run when this run did not set one.
      password: passwordShown ?? prior?.password ?? null,
    };
    writeDemoKeys(data, keysFile);
  }

  const changed =
    demo.created ||
    other.created ||
    provider.created ||
    provider.updated ||
    anyKeyCreated ||
    users.some((u) => u.created || u.passwordReset);
  return {
    teams: [
      { slug: DEMO_TEAM.slug, id: demo.team.id, created: demo.created },
      { slug: OTHER_TEAM.slug, id: other.team.id, created: other.created },
    ],
    users,
    password: passwordShown,
    keys,
    provider: { name: DEMO_PROVIDER.name, url: simUrl, created: provider.created, updated: provider.updated },
    keysFile,
    changed,
  };
}
