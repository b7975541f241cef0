-- Quiesce initial schema (DESIGN.md §3). Hand-written in Prisma's migration layout; the drift test
-- (test/schema-drift.test.ts) proves it matches prisma/schema.prisma.

CREATE TYPE "Role" AS ENUM ('viewer', 'operator', 'manager', 'admin');
CREATE TYPE "ApiKeyKind" AS ENUM ('agent', 'worker', 'gateway', 'operator');
CREATE TYPE "Harness" AS ENUM ('claude_code', 'codex', 'mcp', 'custom');
CREATE TYPE "Lifecycle" AS ENUM ('normal', 'paused', 'killed');
CREATE TYPE "Breaker" AS ENUM ('closed', 'open', 'half_open');
CREATE TYPE "OperationKind" AS ENUM ('call', 'queued', 'scheduled', 'retry');
CREATE TYPE "OperationState" AS ENUM ('queued', 'scheduled', 'running', 'succeeded', 'failed', 'cancelled_not_started', 'denied', 'aborted_unknown');
CREATE TYPE "Decision" AS ENUM ('allow', 'hold', 'deny');
CREATE TYPE "BarrierPhase" AS ENUM ('revoking', 'settling', 'quiet', 'complete');
CREATE TYPE "ProviderResponse" AS ENUM ('accepted', 'rejected', 'unsupported', 'unreachable');
CREATE TYPE "SettledState" AS ENUM ('cancelled_without_effect', 'completed_and_verified', 'unknown');
CREATE TYPE "ReconciliationStatus" AS ENUM ('awaiting_assignee', 'assigned', 'resolved');
CREATE TYPE "Resolution" AS ENUM ('effect_present', 'effect_absent');
CREATE TYPE "UncertainCause" AS ENUM ('cancel_unacknowledged', 'transport_lost', 'provider_status_unavailable', 'target_unreachable');
CREATE TYPE "ReceiptDecision" AS ENUM ('stopped_and_quiet', 'stop_incomplete');

CREATE TABLE "teams" (
    "id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "pause_policy_seconds" INTEGER NOT NULL DEFAULT 86400,
    "pause_reclaim_action" TEXT NOT NULL DEFAULT 'kill',
    "is_drill" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "teams_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "password_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "memberships" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "memberships_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT,
    "kind" "ApiKeyKind" NOT NULL,
    "name" TEXT NOT NULL,
    "scopes" TEXT[],
    "secret_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "runs" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "parent_run_id" TEXT,
    "root_run_id" TEXT NOT NULL,
    "path" TEXT[],
    "depth" INTEGER NOT NULL DEFAULT 0,
    "harness" "Harness" NOT NULL DEFAULT 'custom',
    "native_session_id" TEXT,
    "native_agent_id" TEXT,
    "native_thread_id" TEXT,
    "native_turn_id" TEXT,
    "title" TEXT,
    "is_drill" BOOLEAN NOT NULL DEFAULT false,
    "lifecycle" "Lifecycle" NOT NULL DEFAULT 'normal',
    "lifecycle_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lifecycle_changed_by" TEXT,
    "lifecycle_reason" TEXT,
    "breaker" "Breaker" NOT NULL DEFAULT 'closed',
    "breaker_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "breaker_changed_by" TEXT,
    "breaker_reason" TEXT,
    "breaker_failures" INTEGER NOT NULL DEFAULT 0,
    "breaker_probe_op_id" TEXT,
    "epoch" INTEGER NOT NULL DEFAULT 1,
    "last_heartbeat_at" TIMESTAMPTZ(3),
    "last_native_state" TEXT,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "leases" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "parent_lease_id" TEXT,
    "path" TEXT[],
    "scopes" TEXT[],
    "valid_until" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "leases_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "providers" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'http',
    "cancel_url" TEXT,
    "status_url" TEXT,
    "timeout_ms" INTEGER NOT NULL DEFAULT 5000,
    "settle_deadline_ms" INTEGER NOT NULL DEFAULT 30000,
    "quiet_period_seconds" INTEGER NOT NULL DEFAULT 30,
    "rollback_owner" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "providers_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "operations" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "lease_id" TEXT,
    "epoch_stamp" INTEGER NOT NULL,
    "kind" "OperationKind" NOT NULL,
    "tool" TEXT NOT NULL,
    "args_digest" TEXT,
    "not_before" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "state" "OperationState" NOT NULL,
    "state_reason" TEXT,
    "provider_name" TEXT,
    "provider_job_id" TEXT,
    "outcome_detail" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "last_heartbeat_at" TIMESTAMPTZ(3),
    CONSTRAINT "operations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "gate_decisions" (
    "id" BIGSERIAL NOT NULL,
    "team_id" TEXT,
    "run_id" TEXT NOT NULL,
    "operation_id" TEXT,
    "source" TEXT NOT NULL DEFAULT 'gate',
    "decision" "Decision" NOT NULL,
    "reason" TEXT NOT NULL,
    "epoch_seen" INTEGER,
    "current_epoch" INTEGER,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "gate_decisions_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "barriers" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requested_by" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "new_epoch" INTEGER NOT NULL,
    "policy" JSONB NOT NULL,
    "phase" "BarrierPhase" NOT NULL DEFAULT 'revoking',
    "runs_killed" INTEGER NOT NULL DEFAULT 0,
    "leases_revoked" INTEGER NOT NULL DEFAULT 0,
    "queued_cancelled" INTEGER NOT NULL DEFAULT 0,
    "scheduled_cancelled" INTEGER NOT NULL DEFAULT 0,
    "retries_cancelled" INTEGER NOT NULL DEFAULT 0,
    "in_flight" INTEGER NOT NULL DEFAULT 0,
    "late_requests_denied" INTEGER NOT NULL DEFAULT 0,
    "dispatch_stopped_at" TIMESTAMPTZ(3),
    "queued_cancelled_at" TIMESTAMPTZ(3),
    "observed_at" TIMESTAMPTZ(3),
    "observed_meaning" TEXT,
    "observed_evidence" JSONB,
    "quiesced_at" TIMESTAMPTZ(3),
    "last_settled_at" TIMESTAMPTZ(3),
    "quiet_until" TIMESTAMPTZ(3),
    "quiet_period_seconds" INTEGER,
    "claimed_by" TEXT,
    "claim_expires_at" TIMESTAMPTZ(3),
    "decision" "ReceiptDecision",
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "barriers_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "settlements" (
    "id" TEXT NOT NULL,
    "barrier_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "state_at_barrier" "OperationState" NOT NULL,
    "cancel_requested_at" TIMESTAMPTZ(3),
    "provider_response" "ProviderResponse",
    "provider_responded_at" TIMESTAMPTZ(3),
    "effect_expected" TEXT,
    "effect_observed" TEXT,
    "effect_checked_at" TIMESTAMPTZ(3),
    "effect_check_detail" JSONB,
    "settled_state" "SettledState",
    "settled_at" TIMESTAMPTZ(3),
    "settled_reason" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "settlements_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "effect_receipts" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "provider_operation_id" TEXT,
    "detail" JSONB,
    "committed_at" TIMESTAMPTZ(3) NOT NULL,
    "rollback_owner" TEXT,
    "source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "effect_receipts_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "reconciliations" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "settlement_id" TEXT NOT NULL,
    "assignee_user_id" TEXT,
    "assigned_by" TEXT,
    "assigned_at" TIMESTAMPTZ(3),
    "status" "ReconciliationStatus" NOT NULL DEFAULT 'awaiting_assignee',
    "resolution" "Resolution",
    "evidence" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reconciliations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "uncertain_intervals" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "cause" "UncertainCause" NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    "resolution" TEXT,
    CONSTRAINT "uncertain_intervals_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "stop_receipts" (
    "id" TEXT NOT NULL,
    "barrier_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "canonical" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "decision" "ReceiptDecision" NOT NULL,
    "verified_at" TIMESTAMPTZ(3) NOT NULL,
    "digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "stop_receipts_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "team_id" TEXT,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "teams_slug_key" ON "teams"("slug");
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
CREATE INDEX "memberships_user_id_idx" ON "memberships"("user_id");
CREATE UNIQUE INDEX "memberships_team_id_user_id_key" ON "memberships"("team_id", "user_id");
CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "api_keys"("secret_hash");
CREATE INDEX "api_keys_team_id_idx" ON "api_keys"("team_id");
CREATE INDEX "runs_team_id_created_at_idx" ON "runs"("team_id", "created_at");
CREATE INDEX "runs_root_run_id_idx" ON "runs"("root_run_id");
CREATE INDEX "runs_parent_run_id_idx" ON "runs"("parent_run_id");
CREATE INDEX "runs_team_id_native_session_id_idx" ON "runs"("team_id", "native_session_id");
CREATE INDEX "leases_run_id_idx" ON "leases"("run_id");
CREATE UNIQUE INDEX "providers_team_id_name_key" ON "providers"("team_id", "name");
CREATE INDEX "operations_run_id_state_idx" ON "operations"("run_id", "state");
CREATE UNIQUE INDEX "operations_team_id_operation_id_key" ON "operations"("team_id", "operation_id");
CREATE INDEX "gate_decisions_run_id_at_idx" ON "gate_decisions"("run_id", "at");
CREATE INDEX "gate_decisions_team_id_at_idx" ON "gate_decisions"("team_id", "at");
CREATE INDEX "barriers_run_id_idx" ON "barriers"("run_id");
CREATE INDEX "barriers_phase_claim_expires_at_idx" ON "barriers"("phase", "claim_expires_at");
CREATE INDEX "barriers_team_id_requested_at_idx" ON "barriers"("team_id", "requested_at");
CREATE UNIQUE INDEX "settlements_barrier_id_operation_id_key" ON "settlements"("barrier_id", "operation_id");
CREATE INDEX "effect_receipts_operation_id_idx" ON "effect_receipts"("operation_id");
CREATE UNIQUE INDEX "reconciliations_settlement_id_key" ON "reconciliations"("settlement_id");
CREATE INDEX "reconciliations_team_id_status_idx" ON "reconciliations"("team_id", "status");
CREATE INDEX "uncertain_intervals_run_id_idx" ON "uncertain_intervals"("run_id");
CREATE UNIQUE INDEX "stop_receipts_barrier_id_version_key" ON "stop_receipts"("barrier_id", "version");
CREATE INDEX "audit_events_team_id_id_idx" ON "audit_events"("team_id", "id");

ALTER TABLE "memberships" ADD CONSTRAINT "memberships_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "runs" ADD CONSTRAINT "runs_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "runs" ADD CONSTRAINT "runs_parent_run_id_fkey" FOREIGN KEY ("parent_run_id") REFERENCES "runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "leases" ADD CONSTRAINT "leases_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "leases" ADD CONSTRAINT "leases_parent_lease_id_fkey" FOREIGN KEY ("parent_lease_id") REFERENCES "leases"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "providers" ADD CONSTRAINT "providers_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "operations" ADD CONSTRAINT "operations_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "barriers" ADD CONSTRAINT "barriers_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_barrier_id_fkey" FOREIGN KEY ("barrier_id") REFERENCES "barriers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "effect_receipts" ADD CONSTRAINT "effect_receipts_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "reconciliations" ADD CONSTRAINT "reconciliations_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "uncertain_intervals" ADD CONSTRAINT "uncertain_intervals_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "stop_receipts" ADD CONSTRAINT "stop_receipts_barrier_id_fkey" FOREIGN KEY ("barrier_id") REFERENCES "barriers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
