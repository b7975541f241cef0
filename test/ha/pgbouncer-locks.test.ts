// The tree lock behind a real PgBouncer in transaction mode. PgBouncer hands each transaction to
// whichever server connection is free, so a SESSION advisory lock would stay on a server connection
// after the client that took it is gone (and be "held" by whoever gets that connection next). Every
// lock the control plane takes on its hot paths is transaction-scoped (pg_advisory_xact_lock*): it
// lives exactly as long as the transaction that took it, on the one server connection PgBouncer
// gave that transaction, so pooling cannot leak or split it. The one session lock (migrations)
// runs on a direct connection, never through the pooler.
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { lockRunTreeExclusive, TREE_LOCK_SQL } from "@/lib/platform/db/locks";
import { startPgBouncer, type LocalBouncer } from "../support/pg-local";

const direct = inject("databaseUrl");
const dbName = new URL(direct).pathname.slice(1);
let bouncer: LocalBouncer;
let admin: pg.Client;

/** Advisory locks held on `key` (a bigint key, as pg_locks splits it into classid and objid). */
const advisoryLocks = async (key: string) =>
  (
    await admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = $1)
       AND ((classid::bigint << 32) | objid::bigint) = (${key})`,
      [dbName],
    )
  ).rows[0]!.n;
const treeKey = (root: string) => `hashtextextended('${root}', 0)`;

beforeAll(async () => {
  const u = new URL(direct);
  bouncer = await startPgBouncer({ host: u.hostname, port: Number(u.port || 5432) }, { poolSize: 2 });
  admin = new pg.Client({ connectionString: direct });
  await admin.connect();
}, 30_000);
afterAll(async () => {
  await admin?.end();
  bouncer?.stop();
});

describe("through PgBouncer (transaction mode)", () => {
  test("the pooler really multiplexes: one client's transactions run on different server connections", async () => {
    // With two busy clients and two server connections, consecutive transactions of one client land
    // on different backends at least once — the condition under which session state leaks.
    const a = new pg.Client({ connectionString: bouncer.url(dbName) });
    const b = new pg.Client({ connectionString: bouncer.url(dbName) });
    await a.connect();
    await b.connect();
    const pids = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const [ra] = await Promise.all([
        a.query<{ pid: number }>("SELECT pg_backend_pid() AS pid, pg_sleep(0.01)"),
        b.query("SELECT pg_sleep(0.01)"),
      ]);
      pids.add(ra.rows[0]!.pid);
    }
    await a.end();
    await b.end();
    expect(pids.size).toBeGreaterThan(1);
  });

  test("a session advisory lock leaks past its client (why the tree lock must not be one)", async () => {
    const c = new pg.Client({ connectionString: bouncer.url(dbName) });
    await c.connect();
    await c.query("SELECT pg_advisory_lock(424242)");
    await c.end();
    // The client is gone, the lock is still held by a pooled server connection.
    expect(Number(await advisoryLocks("424242"))).toBeGreaterThan(0);
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242");
    await new Promise((r) => setTimeout(r, 200));
    expect(Number(await advisoryLocks("424242"))).toBe(0);
  });

  test("the tree lock (Prisma transaction through PgBouncer) excludes a gate's shared lock, and is gone at commit", async () => {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: bouncer.url(dbName), max: 2 }) });
    const gate = new pg.Client({ connectionString: bouncer.url(dbName) });
    await gate.connect();
    const root = `run_${Date.now()}`;
    // What the gate function does first: the tree's shared lock, in its own transaction.
    const gateTry = async () => {
      await gate.query("BEGIN");
      const r = await gate.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock_shared(${TREE_LOCK_SQL}) AS ok`, [root]);
      await gate.query("COMMIT");
      return r.rows[0]!.ok;
    };

    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const kill = prisma.$transaction(
      async (tx) => {
        await lockRunTreeExclusive(tx, root);
        locked();
        await hold;
      },
      { timeout: 20_000 },
    );

    await isLocked;
    for (let i = 0; i < 5; i++) expect(await gateTry()).toBe(false);
    expect(Number(await advisoryLocks(treeKey(root)))).toBe(1);
    release();
    await kill;
    expect(Number(await advisoryLocks(treeKey(root)))).toBe(0);
    expect(await gateTry()).toBe(true);
    expect(Number(await advisoryLocks(treeKey(root)))).toBe(0);
    await gate.end();
    await prisma.$disconnect();
  }, 30_000);
});

test("every advisory lock on a pooled path is transaction-scoped (the one session lock is the migrator's direct connection)", () => {
  const root = path.resolve(import.meta.dirname, "../..");
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === "generated" || e.name === "node_modules") continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|sql)$/.test(e.name) && !/\.test\.ts$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(root, "lib"));
  walk(path.join(root, "prisma/migrations"));
  const session = files
    .filter((f) => /pg_(try_)?advisory_lock(_shared)?\s*\(/.test(fs.readFileSync(f, "utf8")))
    .map((f) => path.relative(root, f));
  expect(session).toEqual(["lib/platform/db/migrate.ts"]);
  const xact = files.filter((f) => /pg_advisory_xact_lock/.test(fs.readFileSync(f, "utf8")));
  expect(xact.length).toBeGreaterThan(3);
});
