// The gate's public entry for route handlers: ask, admit at dequeue, heartbeat. The gate is one SQL
// function (lib/modules/gate) that authenticates the key and authorizes `gate.ask` inside the same statement,
// so these callers pass the key's hash, never a principal. Routes reach it here, like all data.
import "server-only";

export { admitCheck, gateCheck, heartbeatCheck } from "./statement";
export type { AdmitOutcome, GateInput, GateOutcome, HeartbeatOutcome, OperationInput } from "./statement";
export { setBreaker } from "./breaker";
export { eventStreams, observedReports, runOperations, runRegistrations, type Quota, type QuotaPass } from "./quotas";
