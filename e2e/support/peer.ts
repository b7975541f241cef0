// HTTP from a chosen loopback address, so the server sees a peer other than 127.0.0.1 (which the e2e
// setup trusts as a reverse proxy): a client speaking for itself, whatever X-Forwarded-For it sends.
import http from "node:http";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { e2e, USERS } from "./env";

export interface PeerAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function fromPeer(
  localAddress: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PeerAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, e2e.baseUrl),
      {
        method: opts.method ?? "GET",
        localAddress,
        agent: false,
        headers: { ...(opts.body !== undefined ? { "content-length": String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A password sign-in through next-auth's real credentials endpoint, from `localAddress`. */
export async function signInFromPeer(localAddress: string, email: string, password: string, headers: Record<string, string> = {}) {
  const csrf = await fromPeer(localAddress, "/api/auth/csrf", { headers });
  const cookie = (csrf.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]).join("; ");
  const { csrfToken } = JSON.parse(csrf.text) as { csrfToken: string };
  return fromPeer(localAddress, "/api/auth/callback/credentials", {
    method: "POST",
    headers: { ...headers, cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email, password, csrfToken, json: "true" }).toString(),
  });
}

/** A throwaway member of team demo with the demo password, so what a journey does to it touches no other. */
export async function throwawayUser(label: string): Promise<{ id: string; email: string }> {
  const d = new pg.Client({ connectionString: e2e.databaseUrl });
  await d.connect();
  const id = `user_${label}${randomBytes(6).toString("hex")}`;
  const email = `${label}.${id.slice(-12)}@example.test`;
  try {
    await d.query("INSERT INTO users (id, email, name, password_hash) SELECT $1, $2, $3, password_hash FROM users WHERE email = $4", [
      id,
      email,
      `Throwaway ${label}`,
      USERS.viewer,
    ]);
    await d.query("INSERT INTO memberships (id, team_id, user_id, role) SELECT $1, t.id, $2, 'viewer' FROM teams t WHERE t.slug = 'demo'", [
      `mem_${label}${randomBytes(6).toString("hex")}`,
      id,
    ]);
  } finally {
    await d.end();
  }
  return { id, email };
}

export async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const d = new pg.Client({ connectionString: e2e.databaseUrl });
  await d.connect();
  try {
    return (await d.query<T>(sql, params)).rows;
  } finally {
    await d.end();
  }
}
