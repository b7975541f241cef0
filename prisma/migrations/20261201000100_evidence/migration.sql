-- Stop evidence that cannot over-claim: team settings for the quiet period, pause reclaim and the
-- default owner of an unknown outcome; one reconciliation per operation whose outcome is unknown; every
-- `aborted_unknown` opens an uncertain interval and a reconciliation with an owner, by trigger; a gate
-- call naming another team's run leaves no row under that run's id.

ALTER TYPE "UncertainCause" ADD VALUE IF NOT EXISTS 'executor_aborted';

ALTER TABLE "teams" ADD COLUMN "quiet_period_ms" INTEGER NOT NULL DEFAULT 2000;
ALTER TABLE "teams" ADD CONSTRAINT "teams_quiet_period_ms_check" CHECK ("quiet_period_ms" >= 0);
ALTER TABLE "teams" ADD COLUMN "default_reconciler_user_id" TEXT;
ALTER TABLE "teams" ADD CONSTRAINT "teams_default_reconciler_user_id_fkey" FOREIGN KEY ("default_reconciler_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "teams" ALTER COLUMN "pause_policy_seconds" DROP NOT NULL;
ALTER TABLE "teams" ALTER COLUMN "pause_policy_seconds" DROP DEFAULT;
-- Nothing ever acted on the old value: reclaim is off until a team turns it on.
UPDATE "teams" SET "pause_policy_seconds" = NULL;

ALTER TABLE "barriers" ALTER COLUMN "quiet_period_seconds" TYPE DOUBLE PRECISION;

ALTER TABLE "reconciliations" ADD COLUMN "operation_id" TEXT;
UPDATE "reconciliations" r SET "operation_id" = s."operation_id" FROM "settlements" s WHERE s."id" = r."settlement_id";
ALTER TABLE "reconciliations" ALTER COLUMN "operation_id" SET NOT NULL;
ALTER TABLE "reconciliations" ALTER COLUMN "settlement_id" DROP NOT NULL;
CREATE UNIQUE INDEX "reconciliations_operation_id_key" ON "reconciliations"("operation_id");
ALTER TABLE "reconciliations" ADD CONSTRAINT "reconciliations_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "uncertain_intervals_operation_id_idx" ON "uncertain_intervals"("operation_id");
CREATE INDEX "gate_decisions_team_id_run_id_at_idx" ON "gate_decisions"("team_id", "run_id", "at");

CREATE OR REPLACE FUNCTION quiesce_open_uncertainty() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_owner text; v_by text; v_cause "UncertainCause"; v_settlement text;
BEGIN
    -- Idempotent: a repeated write of the same state opens nothing twice.
    -- The barrier's settlement writes its own interval (with the provider's cause) before the state.
    IF NOT EXISTS (SELECT 1 FROM uncertain_intervals WHERE operation_id = NEW.id AND ended_at IS NULL) THEN
        v_cause := CASE WHEN NEW.state_reason IN ('cancel_unacknowledged', 'transport_lost', 'provider_status_unavailable', 'target_unreachable', 'executor_aborted')
                        THEN NEW.state_reason::"UncertainCause" ELSE 'executor_aborted' END;
        INSERT INTO uncertain_intervals (id, team_id, run_id, operation_id, cause, started_at)
        VALUES ('unc_' || replace(gen_random_uuid()::text, '-', ''), NEW.team_id, NEW.run_id, NEW.id, v_cause,
                coalesce(NEW.started_at, NEW.finished_at, clock_timestamp()));
    END IF;

    SELECT t.default_reconciler_user_id INTO v_owner
      FROM teams t JOIN memberships m ON m.team_id = t.id AND m.user_id = t.default_reconciler_user_id
     WHERE t.id = NEW.team_id;
    v_by := 'system:default-owner (team setting)';
    IF v_owner IS NULL THEN
        -- The person who asked for the stop that covers this run (a user, not a key or the system).
        SELECT m.user_id INTO v_owner
          FROM runs r JOIN barriers b ON b.run_id = ANY (r.path)
          JOIN memberships m ON m.team_id = b.team_id AND b.requested_by LIKE 'user:%'
                            AND m.user_id = split_part(substr(b.requested_by, 6), ' ', 1)
         WHERE r.id = NEW.run_id
         ORDER BY b.requested_at DESC LIMIT 1;
        v_by := 'system:default-owner (asked for the stop)';
    END IF;
    IF v_owner IS NULL THEN
        SELECT m.user_id INTO v_owner FROM memberships m
         WHERE m.team_id = NEW.team_id AND m.role = 'admin' ORDER BY m.created_at, m.user_id LIMIT 1;
        v_by := 'system:default-owner (team admin)';
    END IF;
    SELECT s.id INTO v_settlement FROM settlements s
     WHERE s.operation_id = NEW.id AND s.settled_state = 'unknown' ORDER BY s.settled_at DESC NULLS LAST LIMIT 1;
    INSERT INTO reconciliations (id, team_id, operation_id, settlement_id, assignee_user_id, assigned_by, assigned_at, status)
    VALUES ('rec_' || replace(gen_random_uuid()::text, '-', ''), NEW.team_id, NEW.id, v_settlement, v_owner,
            CASE WHEN v_owner IS NULL THEN NULL ELSE v_by END,
            CASE WHEN v_owner IS NULL THEN NULL ELSE clock_timestamp() END,
            CASE WHEN v_owner IS NULL THEN 'awaiting_assignee'::"ReconciliationStatus" ELSE 'assigned'::"ReconciliationStatus" END)
    ON CONFLICT (operation_id) DO UPDATE SET settlement_id = coalesce(reconciliations.settlement_id, EXCLUDED.settlement_id);
    RETURN NULL;
END;
$fn$;

CREATE TRIGGER operations_open_uncertainty
    AFTER INSERT OR UPDATE OF state ON operations
    FOR EACH ROW WHEN (NEW.state = 'aborted_unknown')
    EXECUTE FUNCTION quiesce_open_uncertainty();

-- Backfill: unknown outcomes that have no reconciliation yet get one now (same rule as the trigger).
UPDATE operations SET state = state WHERE state = 'aborted_unknown'
   AND NOT EXISTS (SELECT 1 FROM reconciliations r WHERE r.operation_id = operations.id);

CREATE OR REPLACE FUNCTION quiesce_gate_decision_scope() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NEW.team_id IS NOT NULL AND EXISTS (SELECT 1 FROM runs r WHERE r.id = NEW.run_id AND r.team_id <> NEW.team_id) THEN
        NEW.run_id := '(another team''s run)';
    END IF;
    RETURN NEW;
END;
$fn$;

CREATE TRIGGER gate_decisions_scope
    BEFORE INSERT ON gate_decisions
    FOR EACH ROW WHEN (NEW.reason = 'missing_state')
    EXECUTE FUNCTION quiesce_gate_decision_scope();
