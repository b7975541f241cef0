// The navigation's badges, read by the console layout and polled by the header (app/api/console/counts).
import "server-only";
import { countOpenWork } from "../modules/stop";
import { countOpenApprovals } from "../modules/approvals";
import { openWorkTotal } from "../control/open-work";
import type { Principal } from "../platform/auth/principal";

export interface NavCounts {
  approvals: number;
  openWork: number;
}

/** The same counts as the approvals page's queue and the open-work page's header. */
export async function navCounts(p: Principal): Promise<NavCounts> {
  const [work, approvals] = await Promise.all([countOpenWork(p), countOpenApprovals(p)]);
  return { approvals, openWork: openWorkTotal(work) };
}
