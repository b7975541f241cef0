// The HTTP bench's bare baseline: a minimal node:http server doing one `INSERT … RETURNING` per request
// over the same pool the gate uses (lib/platform/db/pool.ts's gatePool, same size and timeouts), and nothing else:
// no routing, no auth, no validation. Started by bench/http.ts as a process of its own; prints its port.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gatePool } from "../../lib/platform/db/pool";

const pool = gatePool();
await pool.query(
  "CREATE TABLE IF NOT EXISTS bench_http_baseline (id BIGSERIAL PRIMARY KEY, k TEXT NOT NULL, at TIMESTAMPTZ(3) NOT NULL DEFAULT now())",
);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    pool
      .query({
        name: "bench_http_insert",
        text: "INSERT INTO bench_http_baseline (k) VALUES ($1) RETURNING id",
        values: [String(Buffer.concat(chunks).length)],
      })
      .then((r) => {
        const body = JSON.stringify({ id: r.rows[0].id });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      })
      .catch((err: Error) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(err.message);
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => console.log(`listening ${(server.address() as AddressInfo).port}`));
process.once("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
