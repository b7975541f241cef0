// Multi-host connection strings against two real PostgreSQL servers (a primary and a streaming hot
// standby): the pools (Prisma's adapter and the gate's) and the LISTEN client connect to the primary
// only, whichever order the hosts are listed in; after a failover (primary killed, standby promoted)
// they reach the new primary, and the listener re-subscribes and tells its subscribers to re-check.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { newClient, newPool, parseMultiHost } from "@/lib/platform/db/hosts";
import { ControlListener } from "@/lib/platform/db/listen";
import { listenUrl } from "@/lib/platform/db/url";
import { setting } from "@/lib/platform/config";
import { CONTROL_CHANNEL, type WakeEvent } from "@/lib/schemas/control-event";
import { removeServer, startPrimary, startStandby, waitFor, type LocalServer } from "../support/pg-local";

describe("parsing", () => {
  test("URL form: hosts, ports, credentials, database, target_session_attrs", () => {
    const p = parseMultiHost("postgresql://u:p%40ss@h1:5432,h2:6543,h3/db?target_session_attrs=read-write&application_name=x");
    expect(p?.hosts).toEqual([
      { host: "h1", port: 5432 },
      { host: "h2", port: 6543 },
      { host: "h3", port: 5432 },
    ]);
    expect(p?.base).toMatchObject({ user: "u", password: "p@ss", database: "db", application_name: "x" });
    expect(p?.targetSessionAttrs).toBe("read-write");
  });

  test("keyword form: one port for all hosts or one per host", () => {
    const p = parseMultiHost("host=a,b port=5433 dbname=q user=postgres target_session_attrs=read-write");
    expect(p?.hosts).toEqual([
      { host: "a", port: 5433 },
      { host: "b", port: 5433 },
    ]);
    expect(p?.base).toMatchObject({ database: "q", user: "postgres" });
    const q = parseMultiHost("host=a,b port=1,2 dbname=q");
    expect(q?.hosts).toEqual([
      { host: "a", port: 1 },
      { host: "b", port: 2 },
    ]);
    expect(q?.targetSessionAttrs).toBe("any");
  });

  test("a single-host string is left to node-postgres", () => {
    expect(parseMultiHost("postgresql://u@h:5432/db")).toBeNull();
    expect(parseMultiHost("postgresql://u@h:5432/db?sslmode=disable")).toBeNull();
  });

  test("DATABASE_URL accepts both multi-host forms and still refuses what is not PostgreSQL", () => {
    for (const v of [
      "postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write",
      "host=h1,h2 port=5432 dbname=db target_session_attrs=read-write",
      "postgres://u@h/db",
    ]) {
      expect(setting("DATABASE_URL", { DATABASE_URL: v })).toBe(v);
    }
    for (const v of ["mysql://u@h1,h2/db", "dbname=db", "not a url"])
      expect(() => setting("DATABASE_URL", { DATABASE_URL: v })).toThrow(/DATABASE_URL/);
  });

  test("an unsupported target_session_attrs is an error, not a silent 'any'", () => {
    expect(() => parseMultiHost("postgresql://h1,h2/db?target_session_attrs=read-only")).toThrow(/target_session_attrs=read-only/);
  });
});

describe("listener behind a transaction pooler", () => {
  test("is refused with an error that says why, and accepted with a session URL", () => {
    const saved = { ...process.env };
    try {
      process.env.DATABASE_URL = "postgresql://postgres@127.0.0.1:6432/quiesce";
      process.env.QUIESCE_DB_POOLER = "transaction";
      delete process.env.QUIESCE_LISTEN_URL;
      expect(() => listenUrl()).toThrow(/LISTEN needs a session connection.*transaction pooler.*QUIESCE_LISTEN_URL/);
      process.env.QUIESCE_LISTEN_URL = process.env.DATABASE_URL;
      expect(() => listenUrl()).toThrow(/transaction pooler/);
      process.env.QUIESCE_LISTEN_URL = "postgresql://postgres@127.0.0.1:5432/quiesce";
      expect(listenUrl()).toBe("postgresql://postgres@127.0.0.1:5432/quiesce");
    } finally {
      process.env = saved;
    }
  });

  test("the listener itself rejects the subscription", async () => {
    const saved = { ...process.env };
    process.env.DATABASE_URL = "postgresql://postgres@127.0.0.1:6432/quiesce";
    process.env.QUIESCE_DB_POOLER = "transaction";
    delete process.env.QUIESCE_LISTEN_URL;
    const l = new ControlListener();
    try {
      await expect(l.subscribe("*", () => {})).rejects.toThrow(/LISTEN needs a session connection/);
    } finally {
      process.env = saved;
      await l.close();
    }
  });
});

describe("primary and standby", () => {
  let primary: LocalServer;
  let standby: LocalServer;
  const port = async (q: { query: (s: string) => Promise<{ rows: Array<{ port: number }> }> }) =>
    (await q.query("SELECT inet_server_port() AS port")).rows[0]!.port;

  beforeAll(async () => {
    primary = await startPrimary();
    const c = new pg.Client({ connectionString: primary.url() });
    await c.connect();
    await c.query("CREATE TABLE ha_probe (id serial PRIMARY KEY, note text)");
    await c.end();
    standby = await startStandby(primary);
  }, 120_000);

  afterAll(() => {
    if (standby) removeServer(standby);
    if (primary) removeServer(primary);
  });

  const multi = (...s: LocalServer[]) =>
    `postgresql://postgres@${s.map((x) => `127.0.0.1:${x.port}`).join(",")}/postgres?target_session_attrs=read-write`;

  test("the standby really is read-only (so the next tests mean something)", async () => {
    const c = new pg.Client({ connectionString: standby.url() });
    await c.connect();
    await expect(c.query("INSERT INTO ha_probe (note) VALUES ('x')")).rejects.toThrow(/read-only/);
    await c.end();
  });

  test("pool, client and Prisma adapter write to the primary even when the standby is listed first", async () => {
    const url = multi(standby, primary);
    const pool = newPool(url, { max: 3 });
    for (let i = 0; i < 5; i++) {
      expect(await port(pool)).toBe(primary.port);
      await pool.query("INSERT INTO ha_probe (note) VALUES ('pool')");
    }
    await pool.end();

    const kw = newClient(
      `host=127.0.0.1,127.0.0.1 port=${standby.port},${primary.port} user=postgres dbname=postgres target_session_attrs=read-write`,
    );
    await kw.connect();
    expect(await port(kw)).toBe(primary.port);
    await kw.end();

    const prisma = new PrismaClient({ adapter: new PrismaPg(newPool(url, { max: 2 })) });
    const rows = await prisma.$queryRaw<Array<{ port: number }>>`SELECT inet_server_port() AS port`;
    expect(rows[0]!.port).toBe(primary.port);
    await prisma.$executeRaw`INSERT INTO ha_probe (note) VALUES ('prisma')`;
    await prisma.$disconnect();
  });

  test("with only a standby reachable, a read-write connection is refused (no write reaches a standby)", async () => {
    const pool = newPool(multi(standby), { max: 1 });
    await expect(pool.query("SELECT 1")).rejects.toThrow(/read-only \(standby\)/);
    await pool.end();
  });

  test("after a failover the pool and the listener reach the new primary; the listener re-subscribes and asks for a re-check", async () => {
    const url = multi(primary, standby);
    const pool = newPool(url, { max: 2 });
    expect(await port(pool)).toBe(primary.port);

    const listener = new ControlListener({ connectionString: url, pingIntervalMs: 200 });
    const events: WakeEvent[] = [];
    await listener.subscribe("*", (e) => events.push(e));
    const notify = async (p: pg.Pool, root: string) =>
      p.query(`SELECT pg_notify($1, $2)`, [CONTROL_CHANNEL, JSON.stringify({ kind: "kill", teamId: "t", rootRunId: root })]);
    await notify(pool, "before");
    await waitFor(async () => events.some((e) => e.rootRunId === "before"), 5000, "notification before failover");

    primary.kill();
    standby.promote();

    // Requests during the failover fail (the caller denies); none is answered by the old primary.
    await waitFor(
      async () => {
        try {
          return (await port(pool)) === standby.port;
        } catch {
          return false;
        }
      },
      30_000,
      "pool did not reach the new primary",
    );
    await pool.query("INSERT INTO ha_probe (note) VALUES ('after failover')");

    await waitFor(async () => events.some((e) => e.kind === "resync"), 30_000, "listener did not reconnect");
    await notify(pool, "after");
    await waitFor(async () => events.some((e) => e.rootRunId === "after"), 5000, "notification after failover");
    await listener.close();
    await pool.end();
  }, 90_000);
});
