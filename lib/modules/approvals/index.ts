import "server-only";

export { decideApproval, getApproval, listApprovals, sweepApprovals } from "./approvals";
export { countOpenApprovals } from "./console/counts";
