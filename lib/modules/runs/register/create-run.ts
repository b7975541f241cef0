// Run registration (docs/architecture.md#data): idempotent on the harness's native identity (session +
// agent + parent), because harness hooks run as fresh processes and may register the same session more
// than once. Three paths, the same checks and answers (docs/design/run-registration.md).
import "server-only";
import type { Harness } from "../../../control/types";
import type { CreateRunBody, CreateRunResponse } from "../../../schemas/runs";
import { actorOf, type Principal } from "../../../platform/auth/principal";
import { authorize } from "../../../platform/auth/authorize";
import { teamFor } from "../internal/team";
import { createChildRun } from "./child";
import { createRootRun } from "./root";
import { createRunInTransaction } from "./transactional";
import type { Registration } from "./registration";

/** Registers a run (or a child run under parentRunId / parentLeaseId) and issues its lease. */
export async function createRun(p: Principal, input: CreateRunBody & { teamId?: string }): Promise<CreateRunResponse> {
  authorize(p, "run.register");
  const reg: Registration = {
    teamId: teamFor(p, input.teamId),
    by: { actor: actorOf(p), holderKeyId: p.type === "key" ? p.keyId : null, system: p.type === "system" },
    harness: (input.harness === "claude-code" ? "claude_code" : (input.harness ?? "custom")) as Harness,
    input,
    native: input.native ?? {},
  };
  // Without a native session, thread or a fork (the common case) there is no identity lookup: roots and
  // children are registered on the raw pool in few round trips (createRootRun, createChildRun).
  if (!input.forkedFrom && !reg.native.sessionId && !reg.native.threadId)
    return input.parentRunId || input.parentLeaseId ? createChildRun(reg) : createRootRun(reg);
  return createRunInTransaction(p, reg);
}
