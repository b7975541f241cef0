import { describe, expect, it } from "vitest";
import { checkDigest } from "./receipt";
import { digestOf } from "../../control/canonical";

const body = { barrier_id: "stop_1", run_id: "run_1", decision: "stopped_and_quiet", effects: { unknown: 0, cancelled_without_effect: 1 }, reconciliation: [] };

describe("receipt digest check", () => {
  it("verifies a receipt whose body, canonical text and digest agree", () => {
    const { canonical, digest } = digestOf(body);
    expect(checkDigest({ body: { ...body, digest }, canonical, digest }).verified).toBe(true);
  });

  it("refuses an edited body, an edited canonical text or a swapped digest", () => {
    const { canonical, digest } = digestOf(body);
    expect(checkDigest({ body: { ...body, decision: "stop_incomplete", digest }, canonical, digest }).verified).toBe(false);
    expect(checkDigest({ body, canonical: canonical.replace("stop_1", "stop_2"), digest }).verified).toBe(false);
    expect(checkDigest({ body, canonical, digest: "0".repeat(64) }).verified).toBe(false);
    expect(checkDigest({ body: { ...body, digest: "f".repeat(64) }, canonical, digest }).verified).toBe(false);
  });
});
