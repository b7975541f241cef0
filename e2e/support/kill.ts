// Kill through the machine API with the demo operator's CLI key (the same door `quiesce kill` uses),
// then wait for the barrier engine to issue a receipt.
import { expect } from "@playwright/test";
import { e2e } from "./env";
import { one } from "./db";

export async function killViaApi(runId: string, reason: string): Promise<string> {
  const res = await fetch(`${e2e.baseUrl}/api/v1/runs/${runId}/kill`, {
    method: "POST",
    headers: { authorization: `Bearer ${e2e.keys().operator!.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ reason }),
  });
  const body = (await res.json()) as { barrierId?: string };
  if (res.status !== 202 || !body.barrierId) throw new Error(`kill answered ${res.status} ${JSON.stringify(body)}`);
  return body.barrierId;
}

export async function receiptVersion(barrierId: string, version: number): Promise<{ decision: string; digest: string; canonical: string }> {
  await expect
    .poll(
      async () =>
        (
          await one<{ n: string }>("SELECT count(*)::text AS n FROM stop_receipts WHERE barrier_id = $1 AND version >= $2", [
            barrierId,
            version,
          ])
        ).n,
      { timeout: 60_000, message: `receipt v${version} of ${barrierId}` },
    )
    .not.toBe("0");
  return one("SELECT decision::text, digest, canonical FROM stop_receipts WHERE barrier_id = $1 AND version = $2", [barrierId, version]);
}
