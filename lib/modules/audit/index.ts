import "server-only";

export { recordPeriodicCheckpoints, verifyAudit } from "./audit-verify";
export { checkAuditChain, listConsoleAudit } from "./console";
