import { Writable } from "node:stream";
import { expect, test } from "vitest";
import { createLogger, requestIdFrom } from ".";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, destination };
}

test("JSON lines with level and message; levels below the threshold are dropped", () => {
  const { lines, destination } = capture();
  const log = createLogger({ level: "info", destination });
  log.debug("hidden");
  log.child({ component: "api", requestId: "r-1" }).warn("shown");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 40, msg: "shown", component: "api", requestId: "r-1" });
});

test("secrets are censored wherever they appear in a logged object", () => {
  const { lines, destination } = capture();
  const log = createLogger({ level: "info", destination });
  log.info(
    {
      headers: { authorization: "Bearer qk_agent_s3cret" },
      apiKey: "qk_x",
      user: { password: "hunter2" },
      cfg: { DATABASE_URL: "postgres://u:pw@h/db" },
    },
    "call",
  );
  const text = JSON.stringify(lines);
  for (const secret of ["qk_agent_s3cret", "qk_x", "hunter2", "pw@h"]) expect(text).not.toContain(secret);
  expect(lines[0]).toMatchObject({ headers: { authorization: "[redacted]" }, user: { password: "[redacted]" } });
});

test("a caller's request id is kept only when well-formed", () => {
  expect(requestIdFrom("abc-123", () => "fresh")).toBe("abc-123");
  expect(requestIdFrom("bad id\nInjected: 1", () => "fresh")).toBe("fresh");
  expect(requestIdFrom(null, () => "fresh")).toBe("fresh");
  expect(requestIdFrom("x".repeat(200), () => "fresh")).toBe("fresh");
});
