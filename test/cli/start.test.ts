// `quiesce start` refuses bad flags and busy ports before it touches anything (the full start with
// `next build`/`next start` is exercised by the lead's end-to-end run, not here).
import net from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCliAll, type CliResult } from "./run-cli";

let blocker: net.Server;
let busyPort = 0;
beforeAll(async () => {
  blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
  busyPort = (blocker.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => blocker.close(() => r())));

test(
  "bad flags exit 2; a busy port exits 1 with a clear message; nothing is started",
  async () => {
    const [badPort, badFlag, busy] = (await runCliAll(
      [
        ["start", "--port", "http"],
        ["start", "--demo-off"],
        ["start", "--port", String(busyPort), "--no-demo"],
      ],
      { DATABASE_URL: "postgresql://nobody@127.0.0.1:1/never" },
    )) as [CliResult, CliResult, CliResult];
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port: not a TCP port: "http"/);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/Unknown option '--demo-off'/);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(new RegExp(`port ${busyPort} is already in use`));
    // It stopped before the database: the unreachable DATABASE_URL above was never dialled.
    expect(busy.stdout + busy.stderr).not.toMatch(/ECONNREFUSED|migration/);
  },
  CLI_TEST_TIMEOUT,
);
