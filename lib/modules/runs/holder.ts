// The holder check (lib/control/holder) against the database, inside the caller's transaction or on the
// pool. Run holders and lease runs never change once written, so no lock is needed to read them.
import "server-only";
import type { Tx } from "../../platform/db/prisma";
import { QuiesceError } from "../../platform/errors";
import { holds, type HoldingCaller } from "../../control/holder";
import type { Principal } from "../../platform/auth/principal";

export interface HeldWork {
  teamId: string;
  path: readonly string[];
  operationKey?: string | null;
}

type Reader = Pick<Tx, "$queryRawUnsafe">;

function callerOf(p: Principal): HoldingCaller {
  return p.type === "key" ? { type: "key", keyId: p.keyId } : { type: p.type };
}

export async function isHolder(db: Reader, p: Principal, work: HeldWork, presentedLeaseId?: string | null): Promise<boolean> {
  const caller = callerOf(p);
  if (caller.type !== "key") return holds(caller, { path: work.path, holders: new Map() });
  const rows = await db.$queryRawUnsafe<{ holders: { id: string; key: string | null }[]; lease_run: string | null }[]>(
    `SELECT coalesce((SELECT json_agg(json_build_object('id', r.id, 'key', r.holder_key_id)) FROM runs r
                       WHERE r.id = ANY ($1::text[]) AND r.team_id = $2), '[]') AS holders,
            (SELECT l.run_id FROM leases l WHERE l.id = $3 AND l.team_id = $2) AS lease_run`,
    [...work.path],
    work.teamId,
    presentedLeaseId ?? null,
  );
  const row = rows[0];
  return holds(caller, {
    path: work.path,
    holders: new Map((row?.holders ?? []).map((h) => [h.id, h.key])),
    operationKey: work.operationKey ?? null,
    presentedLeaseRun: row?.lease_run ?? null,
  });
}

/** 403 unless `p` holds the work; `doing` completes "only the holder of this run may …". */
export async function assertHolder(db: Reader, p: Principal, work: HeldWork, presentedLeaseId: string | null | undefined, doing: string) {
  if (await isHolder(db, p, work, presentedLeaseId)) return;
  const what = work.operationKey !== undefined ? "operation" : "run";
  throw new QuiesceError(
    "forbidden",
    `only the holder of this ${what} may ${doing}: the key that registered it, or a caller presenting its lease (leaseId)`,
  );
}
