// `quiesce receipt <barrierId> [--json|--yaml] [--verify] [--version n]`: print or verify a stop
// receipt (docs/architecture.md#the-stop-receipt). Reads the database directly as a read-only system principal (the reviewer's
// tool next to the database); with --url/--key it reads the same receipt over the API instead
// (GET /api/v1/barriers/{id}/receipt, any key of the team). --verify recomputes the sha256 over the
// canonical JSON and exits 1 on a mismatch.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { clientFrom, onePositional, callApi } from "../../lib/cli/api";
import { getReceipt, verifyReceipt } from "../../lib/modules/stop";
import { serializeReceipt, verifyReceipt as verifyReceiptBody } from "../../lib/control/evidence/receipt";
import { closeDbClients } from "../../lib/start/database";
import type { StopReceipt } from "../../lib/schemas/barriers";

function summary(barrierId: string, b: StopReceipt, versions: number[] | null): string {
  const a = b.authority,
    w = b.work,
    e = b.effects;
  const lines = [
    `stop receipt ${barrierId} v${b.version}${versions ? ` (versions: ${versions.join(", ")})` : ""}: ${b.decision}`,
    `  run ${b.run_id}, verified at ${b.verified_at}, quiet period ${b.quiet_period_seconds}s, last settled ${b.last_settled_at ?? "-"}`,
    `  authority: root lease ${a.root_lease}, ${a.descendant_leases_revoked} descendant lease(s) revoked, ${a.active_leases ?? 0} active, epoch ${a.current_epoch}`,
    `  work: ${w.queued_cancelled} queued cancelled, ${w.in_flight_settled} in flight settled, ${w.scheduled_retries_cancelled} scheduled/retries cancelled`,
    `  effects: ${e.completed_and_verified} completed_and_verified, ${e.cancelled_without_effect} cancelled_without_effect, ${e.unknown} unknown`,
  ];
  for (const r of b.reconciliation ?? [])
    lines.push(`  reconciliation: ${r.operation_id} held by ${r.assignee}${r.status ? ` (${r.status})` : ""}`);
  for (const x of b.effect_receipts ?? [])
    lines.push(
      `  effect receipt: ${String(x.operation_id)} ${String(x.provider_operation_id ?? "")} rollback owner ${String(x.rollback_owner)}`,
    );
  for (const sentence of b.summary ?? []) lines.push(`  ${sentence}`);
  lines.push(`  digest sha256:${b.digest}`);
  return lines.join("\n");
}

export const receiptCommand: Command = {
  summary: "print or verify a barrier's stop receipt (JSON, YAML or a summary)",
  usage: "npm run quiesce -- receipt <barrierId> [--json|--yaml] [--verify] [--version <n>] [--url <url> --key <key>]",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      json: { type: "boolean" },
      yaml: { type: "boolean" },
      verify: { type: "boolean" },
      version: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
    });
    const barrierId = onePositional(positionals, "a barrier id");
    if (values.json && values.yaml) throw new UsageError("--json and --yaml: choose one");
    let version: number | undefined;
    if (values.version !== undefined) {
      version = Number(values.version);
      if (!Number.isInteger(version) || version < 1) throw new UsageError("--version: a positive integer");
    }
    const print = (body: StopReceipt, versions: number[] | null) => {
      if (values.json) process.stdout.write(serializeReceipt(body, "json"));
      else if (values.yaml) process.stdout.write(serializeReceipt(body, "yaml"));
      else if (!values.verify) console.log(summary(barrierId, body, versions));
    };
    if (values.url || values.key) {
      const client = clientFrom(values);
      return callApi(async () => {
        const q = version ? `?version=${version}` : "";
        const { json } = await client.request<StopReceipt>("GET", `/api/v1/barriers/${encodeURIComponent(barrierId)}/receipt${q}`);
        print(json, null);
        if (!values.verify) return 0;
        const v = verifyReceiptBody({ body: json });
        console.log(
          v.ok
            ? `digest verified: sha256:${v.recomputed}`
            : `DIGEST MISMATCH: receipt says ${String(json.digest)}, body hashes to ${v.recomputed} (${v.detail})`,
        );
        return v.ok ? 0 : 1;
      });
    }
    const system = { type: "system", name: "cli:receipt" } as const;
    try {
      const r = await getReceipt(system, barrierId, version);
      print(
        r.body,
        r.versions.map((x) => x.version),
      );
      if (!values.verify) return 0;
      const v = await verifyReceipt(system, barrierId, r.version);
      console.log(
        v.ok
          ? `digest verified: sha256:${v.digest} (v${v.version})`
          : `DIGEST MISMATCH (v${v.version}): stored ${v.digest}, recomputed ${v.recomputed}: ${v.detail}`,
      );
      console.log(r.signature.valid ? `signature valid (key ${r.signature.keyId})` : `signature NOT valid: ${r.signature.detail}`);
      return v.ok && (r.signature.valid || !r.envelope) ? 0 : 1;
    } finally {
      await closeDbClients();
    }
  },
};
