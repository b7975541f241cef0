// The gate's public entry for route handlers: ask, admit at dequeue, heartbeat. The gate is one SQL
// function (lib/gate) that authenticates the key and authorizes `gate.ask` inside the same statement,
// so these callers pass the key's hash, never a principal. Routes reach it here, like all data.
import "server-only";

export { admitCheck, gateCheck, heartbeatCheck } from "../gate";
export type { AdmitOutcome, GateInput, GateOutcome, HeartbeatOutcome, OperationInput } from "../gate";
