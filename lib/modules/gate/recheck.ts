// In-process re-check: the heartbeat entry point of the gate, called directly in PostgreSQL (one
// round trip, no HTTP hop) with the hash of the worker's own key — the same authority answer the
// HTTP heartbeat gives, and recorded the same way (gate_decisions, source heartbeat).
import "server-only";
import { heartbeatCheck } from "./statement";
import { hashKeySecret } from "../../platform/auth/api-key";
import type { Recheck } from "../../agent/abort/tokens";

export function gateRecheck(apiKeySecret: string): Recheck {
  const keyHash = hashKeySecret(apiKeySecret);
  return async (operationId, target) => {
    const r = await heartbeatCheck({ keyHash, operationId, leaseId: target.leaseId });
    if (r.ok) return { continue: r.continue, reason: r.reason };
    // A revoked key or a vanished operation is no authority to keep going (fail closed).
    return { continue: false, reason: r.code === "not_found" ? "missing_state" : r.code };
  };
}
