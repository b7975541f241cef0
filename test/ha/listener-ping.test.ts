// The LISTEN connection's liveness ping against a real PostgreSQL, through a TCP relay this test
// holds: while the server's answers are held back (a slow network, a busy server) the listener sends
// no second ping on the connection still waiting for the first one — node-postgres deprecates that
// ("client.query() when the client is already executing a query"), and it was the warning in the
// test output (the fail-over tests ping every 200 ms) — and it pings again once the answer arrived.
import net from "node:net";
import { afterAll, expect, inject, test } from "vitest";
import { ControlListener } from "../../lib/platform/db/listen";

const sockets = new Set<net.Socket>();
let server: net.Server | undefined;
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => (server ? server.close(r) : r(null)));
});

/** A relay to PostgreSQL whose server-to-client direction can be held (bytes kept, sent on release). */
async function relay(target: URL) {
  let held = false;
  const queued: { to: net.Socket; data: Buffer }[] = [];
  let fromServer = 0;
  server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => (client.destroy(), upstream.destroy()));
    }
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => {
      fromServer++;
      if (held) queued.push({ to: client, data: d });
      else client.write(d);
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const url = new URL(target.toString());
  url.hostname = "127.0.0.1";
  url.port = String((server!.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    hold: () => (held = true),
    release: () => {
      held = false;
      for (const q of queued.splice(0)) q.to.write(q.data);
    },
    answers: () => fromServer,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a ping whose answer is late is not followed by another on the busy connection; pinging resumes after the answer", async () => {
  const r = await relay(new URL(inject("databaseUrl")));
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on("warning", onWarning);
  const listener = new ControlListener({ connectionString: r.url, pingIntervalMs: 40 });
  try {
    await listener.subscribe("*", () => {});
    await sleep(200); // a few pings answered
    r.hold();
    const before = r.answers();
    await sleep(600); // 15 intervals, well inside the 5 s ping timeout
    const whileHeld = r.answers() - before;
    r.release();
    await sleep(300);
    expect(warnings.filter((m) => /already executing a query/.test(m))).toEqual([]);
    // At most the one ping in flight when the answers were held reached the server during the hold.
    expect(whileHeld).toBeLessThanOrEqual(1);
    // Pinging went on after the late answer arrived (the connection was not given up on).
    const after = r.answers();
    await sleep(300);
    expect(r.answers()).toBeGreaterThan(after);
  } finally {
    process.off("warning", onWarning);
    await listener.close();
  }
});
