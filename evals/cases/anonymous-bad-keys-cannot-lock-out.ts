// One anonymous client sends made-up API keys — no X-Forwarded-For, nothing to tell it apart — until the
// bad-key throttle answers 429; then a valid agent key asks the gate from the very same address. The
// throttle counts bad keys against the socket's address and refuses only them, so the valid key's gate
// call is served (docs/security/identity.md#throttling). The client speaks from a loopback address of its own
// (127.0.0.9), so the block it earns reaches no other case.
import http from "node:http";
import { check, links, newRun, opId } from "../../lib/drill/support";
import type { EvalCase } from "./types";

const FROM = "127.0.0.9";

function post(url: string, key: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        localAddress: FROM,
        agent: false,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) },
      },
      (res) => {
        let out = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (out += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: out ? (JSON.parse(out) as Record<string, unknown>) : {} }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

export const anonymousBadKeysCannotLockOut: EvalCase = {
  name: "anonymous_bad_keys_cannot_lock_out",
  seed: "000",
  expected: "valid_key_served",
  summary:
    "one anonymous client sends made-up keys (no X-Forwarded-For) until it gets 429, then a valid agent key asks the gate from the same address: bad keys stay refused, the valid key is served",
  needs: ["agent"],
  async run(stack) {
    const ctx = stack.drillContext();
    const run = await newRun(ctx, { title: "bad keys next door" });
    const gateUrl = `${stack.web.url}/api/v1/gate`;
    const ask = { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, tool: "db.compatibility_check" };
    const bad: number[] = [];
    // Past the default allowance (QUIESCE_BAD_KEY_FREE_FAILURES, 20), until the throttle answers 429.
    for (let i = 0; i < 40 && !bad.includes(429); i++)
      bad.push((await post(gateUrl, `qk_agent_madeup${i}${stack.tag}`, { ...ask, operationId: opId(ctx, `bad-${i}`) })).status);
    const good = await post(gateUrl, stack.fx.main.keys.agent!, { ...ask, operationId: opId(ctx, "valid") });
    const after = await post(gateUrl, `qk_agent_madeupafter${stack.tag}`, { ...ask, operationId: opId(ctx, "bad-after") });
    const checks = [
      check(
        "made-up keys are refused, and past the allowance get 429",
        bad.at(-1) === 429 && bad.slice(0, -1).every((s) => s === 401),
        bad,
      ),
      check("the valid key's gate call from the same address is served", good.status === 200 && good.json.decision === "allow", good),
      check("a made-up key after it is still refused with 429", after.status === 429, after.status),
    ];
    const served = good.status === 200 && good.json.decision === "allow";
    return {
      observed: served
        ? "valid_key_served"
        : `valid_key_${good.status}_${String((good.json.error as { code?: string } | undefined)?.code ?? good.json.decision)}`,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { from: FROM, badStatuses: bad },
    };
  },
};
