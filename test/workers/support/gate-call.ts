// One tool call from a separate process (another "pod"): asks the gate over HTTP and prints the
// decision as one JSON line. Any SDK error is printed as a deny (fail closed), as an adapter would.
import { QuiesceClient } from "../../../lib/agent/sdk/client";

const client = new QuiesceClient({ timeoutMs: 10_000 });
try {
  const d = await client.gate({
    runId: process.env.RUN_ID!,
    leaseId: process.env.LEASE_ID!,
    epoch: Number(process.env.EPOCH),
    operationId: process.env.OP_ID!,
    tool: process.env.TOOL ?? "deployment.reserve_preview",
  });
  process.stdout.write(`${JSON.stringify({ event: "decision", ...d })}\n`);
} catch (err) {
  process.stdout.write(
    `${JSON.stringify({ event: "decision", decision: "deny", reason: "control_unreachable", error: (err as Error).message })}\n`,
  );
}
