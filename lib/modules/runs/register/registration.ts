// What every registration path shares: who registers, what they asked for, and how a lease the pure
// rules refuse is answered (docs/design/run-registration.md).
import "server-only";
import { QuiesceError } from "../../../platform/errors";
import type { LeaseGrant, LeaseRequest, LeaseResult, ParentLease } from "../../../control/lease";
import type { Harness } from "../../../control/types";
import type { CreateRunBody, CreateRunResponse } from "../../../schemas/runs";

export type Native = NonNullable<CreateRunBody["native"]>;

/** Who registers: the audit actor, the key that will hold the run, and whether it is the trusted system. */
export interface Registrant {
  actor: string;
  holderKeyId: string | null;
  system: boolean;
}

/** One registration request, resolved to its team and harness. */
export interface Registration {
  teamId: string;
  by: Registrant;
  harness: Harness;
  input: CreateRunBody;
  native: Native;
  /** A restart of a killed root on settled ground (never from the API body: only the restart path sets it). */
  restartOf?: { runId: string; digest: string };
}

/** The lease terms the registration asks for. */
export function leaseTerms(input: CreateRunBody): LeaseRequest {
  return { scopes: input.scopes, ttlSeconds: input.leaseTtlSeconds };
}

/** A parent lease as read from the database, in the pure rules' terms (times in milliseconds). */
export function parentLeaseOf(l: {
  id: string;
  path: string[];
  scopes: string[];
  validUntil: Date;
  maxValidUntil: Date | null;
  revokedAt: Date | null;
}): ParentLease {
  return {
    id: l.id,
    path: l.path,
    scopes: l.scopes,
    validUntil: l.validUntil.getTime(),
    maxValidUntil: l.maxValidUntil?.getTime() ?? null,
    revokedAt: l.revokedAt?.getTime() ?? null,
  };
}

export function leaseRefusal(r: Extract<LeaseResult, { ok: false }>): QuiesceError {
  const msg = `${r.field ?? "lease"}: ${r.message}`;
  if (r.code === "bad_ttl" || r.code === "bad_scope") return new QuiesceError("bad_request", msg);
  if (r.code === "scope_not_held") return new QuiesceError("forbidden", msg);
  return new QuiesceError("conflict", msg);
}

/** The answer of a registration that created its run. */
export function createdAnswer(
  r: { runId: string; leaseId: string; epoch: number; parentRunId: string | null; rootRunId: string },
  lease: LeaseGrant,
): CreateRunResponse {
  return {
    runId: r.runId,
    leaseId: r.leaseId,
    epoch: r.epoch,
    validUntil: new Date(lease.validUntil).toISOString(),
    parentRunId: r.parentRunId,
    rootRunId: r.rootRunId,
    scopes: lease.scopes,
    created: true,
  };
}
