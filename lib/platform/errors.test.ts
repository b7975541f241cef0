import { describe, expect, test } from "vitest";
import { asQuiesceError, isDatabaseUnavailable } from "./errors";

describe("a database outage is a 503, a bug is a 500", () => {
  test("connection and failover errors, also wrapped in a cause chain", () => {
    const pgErr = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    expect(isDatabaseUnavailable(pgErr)).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("x"), { code: "25006" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("wrapped", { cause: new Error("connect ECONNREFUSED 127.0.0.1:5432") }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("no read-write PostgreSQL host reachable (a: refused)"))).toBe(true);
    expect(asQuiesceError(new Error("Connection terminated unexpectedly")).httpStatus).toBe(503);
    // A slow or saturated database: statement / lock timeouts, and Prisma finding no connection in time.
    expect(isDatabaseUnavailable(Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("lock timeout"), { code: "55P03" }))).toBe(true);
    // a raw query's SQLSTATE sits in Prisma's meta (P2010: raw query failed)
    const raw = (code: string) =>
      Object.assign(new Error("Raw query failed."), {
        code: "P2010",
        meta: { driverAdapterError: { name: "DriverAdapterError", cause: { originalCode: code, kind: "postgres", code } } },
      });
    expect(isDatabaseUnavailable(raw("55P03"))).toBe(true);
    expect(isDatabaseUnavailable(raw("23505"))).toBe(false);
    const p2028 = Object.assign(new Error("Transaction API error: Unable to start a transaction in the given time."), { code: "P2028" });
    expect(asQuiesceError(p2028).httpStatus).toBe(503);
  });

  test("anything else stays an internal error that leaks nothing", () => {
    expect(isDatabaseUnavailable(new TypeError("cannot read properties of undefined"))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    const e = asQuiesceError(new Error("secret detail"));
    expect(e.httpStatus).toBe(500);
    expect(e.message).toBe("internal error");
  });
});
