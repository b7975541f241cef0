// Direct reads of the database a journey ran against: every spec checks the page AND the rows.
import pg from "pg";
import { e2e } from "./env";

let client: pg.Client | null = null;

export async function db(): Promise<pg.Client> {
  if (!client) {
    client = new pg.Client({ connectionString: e2e.databaseUrl });
    await client.connect();
  }
  return client;
}

export async function one<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T> {
  const r = await (await db()).query<T>(sql, params);
  if (r.rows.length !== 1) throw new Error(`expected one row, got ${r.rows.length}: ${sql}`);
  return r.rows[0]!;
}

export async function rows<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await (await db()).query<T>(sql, params)).rows;
}

export async function closeDb(): Promise<void> {
  await client?.end();
  client = null;
}
