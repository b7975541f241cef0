// `quiesce keys …` as a real process against the test database: create prints only the secret, the
// secret works, bad input exits 2 and writes nothing, revoke disarms the key.
import pg from "pg";
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCli, runCliAll } from "./run-cli";
import { authenticateKey } from "../../lib/modules/keys/api-keys";
import { ensureMembership, ensureTeam, ensureUser } from "../../lib/modules/members/admin-directory";
import { closeDbClients } from "../../lib/start/database";

const SYSTEM = { type: "system", name: "test" } as const;
const tag = Math.random().toString(36).slice(2, 8);
const slug = `cli-keys-${tag}`;
const email = `op-${tag}@cli.test`;
let teamId = "";
const db = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });

beforeAll(async () => {
  teamId = (await ensureTeam(SYSTEM, { slug, name: "CLI keys" })).team.id;
  const user = (await ensureUser(SYSTEM, { email, name: "Op", passwordHash: null })).user;
  await ensureMembership(SYSTEM, { teamId, userId: user.id, role: "operator" });
});
afterAll(async () => {
  await db.end();
  await closeDbClients();
});

const keyCount = async () => (await db.query("SELECT count(*)::int AS n FROM api_keys WHERE team_id = $1", [teamId])).rows[0].n as number;

test(
  "keys create prints only the secret on stdout, and the secret authenticates as that kind, team and scope",
  async () => {
    const r = await runCli([
      "keys",
      "create",
      "--team",
      slug,
      "--kind",
      "agent",
      "--scopes",
      "gate.ask,run.read",
      "--expires-in",
      "2d",
      "--name",
      "ci agent",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^qk_agent_[A-Za-z0-9_-]+\n$/);
    const secret = r.stdout.trim();
    const p = await authenticateKey(secret);
    expect(p).toMatchObject({ type: "key", kind: "agent", teamId, scopes: ["gate.ask", "run.read"], role: null });
    expect(r.stderr).toContain(p!.keyId);
    const row = (await db.query("SELECT name, expires_at FROM api_keys WHERE id = $1", [p!.keyId])).rows[0];
    expect(row.name).toBe("ci agent");
    const days = (row.expires_at.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(1.5);
    expect(days).toBeLessThan(2.01);

    const op = await runCli(["keys", "create", "--team", slug, "--kind", "operator", "--user", email.toUpperCase()]);
    expect(op.code, op.stderr).toBe(0);
    expect(await authenticateKey(op.stdout.trim())).toMatchObject({ kind: "operator", role: "operator", teamId });
  },
  CLI_TEST_TIMEOUT,
);

test(
  "bad input exits 2 with a message naming the problem, and creates no key",
  async () => {
    const before = await keyCount();
    const cases: [string[], RegExp][] = [
      [["keys", "create", "--kind", "agent"], /--team is required/],
      [["keys", "create", "--team", "no-such-team-zz", "--kind", "agent"], /no team with slug "no-such-team-zz"/],
      [["keys", "create", "--team", slug, "--kind", "root"], /--kind: must be one of/],
      [["keys", "create", "--team", slug, "--kind", "operator"], /--user is required/],
      [["keys", "create", "--team", slug, "--kind", "agent", "--user", email], /--user is only for --kind operator/],
      [["keys", "create", "--team", slug, "--kind", "operator", "--user", "ghost@cli.test"], /no user with email/],
      [["keys", "create", "--team", slug, "--kind", "agent", "--scopes", "run.kill,launch.missiles"], /unknown scope "launch.missiles"/],
      [["keys", "create", "--team", slug, "--kind", "agent", "--expires-in", "soon"], /--expires-in: expected a duration/],
      [["keys", "create", "--team", slug, "--kind", "agent", "--colour", "red"], /Unknown option '--colour'/],
      [["keys", "frobnicate"], /unknown subcommand "keys frobnicate"/],
    ];
    const results = await runCliAll(cases.map(([args]) => args));
    results.forEach((r, i) => {
      expect(r.code, `${cases[i]![0].join(" ")}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
      expect(r.stdout).toBe("");
    });
    expect(await keyCount()).toBe(before);
  },
  CLI_TEST_TIMEOUT,
);

test(
  "keys list shows active keys; keys revoke disarms a key at once; unknown ids exit 2",
  async () => {
    const created = await runCli(["keys", "create", "--team", slug, "--kind", "worker"]);
    const secret = created.stdout.trim();
    const id = (await authenticateKey(secret))!.keyId;

    const listed = await runCli(["keys", "list", "--team", slug, "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const keys = JSON.parse(listed.stdout) as { id: string; kind: string }[];
    expect(keys.find((k) => k.id === id)?.kind).toBe("worker");
    expect(listed.stdout).not.toContain(secret); // only hashes are stored; nothing can print a secret again

    const revoked = await runCli(["keys", "revoke", id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${id}`);
    expect(await authenticateKey(secret)).toBeNull();

    const active = JSON.parse((await runCli(["keys", "list", "--team", slug, "--json"])).stdout) as { id: string }[];
    expect(active.some((k) => k.id === id)).toBe(false);
    const all = JSON.parse((await runCli(["keys", "list", "--team", slug, "--all", "--json"])).stdout) as {
      id: string;
      revokedAt: string | null;
    }[];
    expect(all.find((k) => k.id === id)?.revokedAt).not.toBeNull();

    const missing = await runCli(["keys", "revoke", "key_doesnotexist"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/not found/);
  },
  CLI_TEST_TIMEOUT,
);
