// Who may do what (docs/architecture.md#, #security). Pure: the data-access layer loads the principal's current
// role from the database and asks here; nothing else decides permissions.
import type { KeyKind, Role } from "./types";

export const ACTIONS = [
  "run.read", // read runs, barriers, receipts, decisions
  "run.register", // register runs / child runs
  "gate.ask", // ask the gate, admit at dequeue, heartbeat
  "operation.register", // register queued / scheduled / retry work
  "operation.report", // report completion / effects / harness acknowledgments
  "run.pause",
  "run.resume",
  "run.kill",
  "fleet.stop", // stop scopes: pause / kill every run of the team matching a filter
  "breaker.trip",
  "breaker.reset",
  "reconciliation.assign",
  "reconciliation.resolve", // only the assignee, or a manager/admin
  "audit.read",
  "key.manage",
  "member.manage",
  "policy.write", // save, dry-run and enable policy versions (admins)
  "provider.read", // the team's providers (people only: their URLs map the network behind them)
  "provider.write", // register providers (admins)
  "approval.decide", // answer an approval; the approval's rule narrows further (lib/control/policy.ts mayDecideApproval)
] as const;
export type Action = (typeof ACTIONS)[number];

const READ: Action[] = ["run.read"];
// Each role is the one below it plus what it adds, so a new action granted to operators reaches managers
// too without a second edit (the ladder viewer < operator < manager < admin is the product's, docs/security.md).
const VIEWER: readonly Action[] = [...READ, "reconciliation.resolve", "approval.decide", "provider.read"];
/** What stops or restarts runs: the operator's own grant, and control writes. */
const RUN_CONTROL: readonly Action[] = ["run.pause", "run.resume", "run.kill", "fleet.stop", "breaker.trip", "breaker.reset"];
const OPERATOR: readonly Action[] = [...VIEWER, ...RUN_CONTROL, "audit.read"];
const MANAGER: readonly Action[] = [...OPERATOR, "reconciliation.assign"];
const ROLE_ACTIONS: Record<Role, readonly Action[]> = { viewer: VIEWER, operator: OPERATOR, manager: MANAGER, admin: ACTIONS };

/** Machine keys can read and ask; no machine key can pause, kill, resume, trip, reset or resolve. */
const MACHINE_ACTIONS: Record<Exclude<KeyKind, "operator">, readonly Action[]> = {
  agent: [...READ, "run.register", "gate.ask", "operation.register", "operation.report"],
  worker: [...READ, "gate.ask", "operation.register", "operation.report"],
  gateway: [...READ, "run.register", "gate.ask", "operation.register", "operation.report"],
};

export type Caller = { type: "user"; role: Role } | { type: "key"; kind: KeyKind; role: Role | null; scopes: readonly string[] };

/**
 * An operator key is a person's key: it carries exactly that user's *current* role (looked up on every
 * call), so a demoted user's key is demoted too. Scopes on a key can only narrow, never widen.
 */
export function isAllowed(caller: Caller, action: Action): boolean {
  if (caller.type === "user") return ROLE_ACTIONS[caller.role].includes(action);
  const base = caller.kind === "operator" ? (caller.role ? ROLE_ACTIONS[caller.role] : []) : MACHINE_ACTIONS[caller.kind];
  if (!base.includes(action)) return false;
  return caller.scopes.length === 0 || caller.scopes.includes("*") || caller.scopes.includes(action);
}

const CONTROL_WRITES: readonly Action[] = [
  ...RUN_CONTROL,
  "reconciliation.assign",
  "reconciliation.resolve",
  "key.manage",
  "member.manage",
  "provider.write",
];

export function isControlWrite(action: Action): boolean {
  return CONTROL_WRITES.includes(action);
}
