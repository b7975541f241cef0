// The demo seed against the real test database: what it creates, that a second run changes nothing,
// and that concurrent first starts neither fail nor duplicate anything.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, inject, test } from "vitest";
import { seedDemo, DEMO_USERS } from "./index";
import { readDemoKeys } from "./demo-keys-file";
import { authenticateKey } from "../modules/keys/api-keys";
import { verifyPassword } from "../platform/auth/password";
import { closeDbClients } from "../start/database";

const db = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
afterAll(async () => {
  await db.end();
  await closeDbClients();
});
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-seed-"));

/** Everything the seed can write, scoped to the demo/other teams and demo users (other tests share the database). */
async function snapshot() {
  const q = async (sql: string) => (await db.query(sql)).rows;
  const teams = `(SELECT id FROM teams WHERE slug IN ('demo','other'))`;
  return {
    teams: await q(`SELECT id, slug, name FROM teams WHERE slug IN ('demo','other') ORDER BY slug`),
    users: await q(`SELECT id, email, name, password_hash FROM users WHERE email LIKE '%@demo.quiesce.dev' ORDER BY email`),
    memberships: await q(`SELECT team_id, user_id, role FROM memberships WHERE team_id IN ${teams} ORDER BY user_id`),
    keys: await q(`SELECT id, team_id, kind, name, user_id, revoked_at FROM api_keys WHERE team_id IN ${teams} ORDER BY id`),
    providers: await q(`SELECT * FROM providers WHERE team_id IN ${teams} ORDER BY id`),
    audit: await q(`SELECT count(*)::int AS n FROM audit_events WHERE team_id IN ${teams} OR action = 'user.create'`),
  };
}

test("first run creates the demo tenancy; a second run changes nothing and shows no secrets", async () => {
  const keysFile = path.join(dir, "demo-keys.json");
  const first = await seedDemo({ keysFile, password: "first-pass-123" });
  expect(first.changed).toBe(true);
  expect(first.password).toBe("first-pass-123");
  expect(
    first.keys
      .filter((k) => k.created)
      .map((k) => `${k.team}/${k.kind}`)
      .sort(),
  ).toEqual(["demo/agent", "demo/gateway", "demo/operator", "demo/worker", "other/agent"]);

  const s1 = await snapshot();
  expect(s1.teams.map((t) => [t.slug, t.name])).toEqual([
    ["demo", "Demo team"],
    ["other", "Other team"],
  ]);
  expect(s1.users.map((u) => u.email)).toEqual(DEMO_USERS.map((u) => u.email).sort());
  const roleOf = Object.fromEntries(s1.memberships.map((m) => [s1.users.find((u) => u.id === m.user_id)!.email, m.role]));
  expect(roleOf).toEqual(Object.fromEntries(DEMO_USERS.map((u) => [u.email, u.role])));
  expect(s1.providers).toHaveLength(1);
  expect(s1.providers[0]).toMatchObject({
    name: "deploy-sim",
    kind: "simulated",
    cancel_url: "http://127.0.0.1:4700/cancel",
    status_url: "http://127.0.0.1:4700/status",
    quiet_period_seconds: 5,
    rollback_owner: "release-oncall",
  });
  for (const u of s1.users) expect(await verifyPassword("first-pass-123", u.password_hash)).toBe(true);

  // The file holds working secrets, readable only by the owner.
  expect(statSync(keysFile).mode & 0o777).toBe(0o600);
  const file = readDemoKeys(keysFile)!;
  const operator = await authenticateKey(file.keys.operator!.secret);
  expect(operator).toMatchObject({ kind: "operator", teamId: s1.teams[0].id, role: "operator" });
  const other = await authenticateKey(file.keys.otherAgent!.secret);
  expect(other).toMatchObject({ kind: "agent", teamId: s1.teams[1].id, role: null });
  expect(readFileSync(keysFile, "utf8")).toContain("first-pass-123");

  const second = await seedDemo({ keysFile, password: "first-pass-123" });
  expect(second.changed).toBe(false);
  expect(second.password).toBeNull();
  expect(second.keys.every((k) => !k.created)).toBe(true);
  expect(await snapshot()).toEqual(s1);
});

test("an explicit QUIESCE_DEMO_PASSWORD that differs resets the demo passwords (and only then)", async () => {
  const keysFile = path.join(dir, "demo-keys.json");
  const r = await seedDemo({ keysFile, password: "second-pass-456" });
  expect(r.password).toBe("second-pass-456");
  expect(r.users.every((u) => u.passwordReset)).toBe(true);
  const { users } = await snapshot();
  for (const u of users) expect(await verifyPassword("second-pass-456", u.password_hash)).toBe(true);
  const again = await seedDemo({ keysFile, password: "second-pass-456" });
  expect(again.changed).toBe(false);
});

test("a lost keys file gets fresh working keys; concurrent seeds never duplicate teams, users or the provider", async () => {
  const before = await snapshot();
  const [a, b] = await Promise.all([seedDemo({ keysFile: path.join(dir, "a.json") }), seedDemo({ keysFile: path.join(dir, "b.json") })]);
  expect(a.keys.every((k) => k.created) && b.keys.every((k) => k.created)).toBe(true);
  const after = await snapshot();
  expect(after.teams).toEqual(before.teams);
  expect(after.users.map((u) => u.id)).toEqual(before.users.map((u) => u.id));
  expect(after.memberships).toEqual(before.memberships);
  expect(after.providers).toEqual(before.providers);
  expect(after.keys).toHaveLength(before.keys.length + 10);
  for (const k of [...a.keys, ...b.keys]) expect(await authenticateKey(k.secret)).not.toBeNull();
});

test("the simulated provider row follows QUIESCE_PROVIDER_SIM_PORT: a start on another port repoints it (audited), once", async () => {
  const keysFile = path.join(dir, "port.json");
  await seedDemo({ keysFile, password: "first-pass-123" });
  const moved = await seedDemo({ keysFile, password: "first-pass-123", simPort: 4799 });
  expect(moved.changed).toBe(true);
  expect(moved.provider).toMatchObject({ url: "http://127.0.0.1:4799", created: false, updated: true });
  const row = async () =>
    (await db.query(`SELECT p.id, cancel_url, status_url, job_url FROM providers p JOIN teams t ON t.id = p.team_id WHERE t.slug = 'demo'`))
      .rows[0];
  const r = await row();
  expect(r).toMatchObject({
    cancel_url: "http://127.0.0.1:4799/cancel",
    status_url: "http://127.0.0.1:4799/status",
    job_url: "http://127.0.0.1:4799/jobs/{providerJobId}",
  });
  const audit = await db.query(`SELECT before, after FROM audit_events WHERE action = 'provider.update' AND target = $1`, [r.id]);
  expect(audit.rows).toHaveLength(1);
  expect(audit.rows[0].after).toEqual({
    cancelUrl: "http://127.0.0.1:4799/cancel",
    statusUrl: "http://127.0.0.1:4799/status",
    compensateUrl: "http://127.0.0.1:4799/compensate",
    jobUrl: "http://127.0.0.1:4799/jobs/{providerJobId}",
  });
  const again = await seedDemo({ keysFile, password: "first-pass-123", simPort: 4799 });
  expect(again.changed).toBe(false);
  // Back to the default for the other tests sharing this database.
  await seedDemo({ keysFile, password: "first-pass-123", simPort: 4700 });
  expect(await row()).toMatchObject({ cancel_url: "http://127.0.0.1:4700/cancel" });
});
