-- Recovery (docs/evidence.md#recovery): every effect a barrier settled completed_and_verified opens one
-- recovery item at commit, with an owner and a due time; a provider may declare a compensation URL.
-- The default owner of reconciliations becomes one function, used by both.
CREATE TYPE "RecoveryState" AS ENUM ('open', 'in_progress', 'rolled_back', 'accepted', 'failed');

ALTER TABLE "teams" ADD COLUMN "recovery_due_seconds" INTEGER NOT NULL DEFAULT 86400;
ALTER TABLE "providers" ADD COLUMN "compensate_url" TEXT;

CREATE TABLE "recovery_items" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "barrier_id" TEXT NOT NULL,
    "settlement_id" TEXT NOT NULL,
    "provider_name" TEXT,
    "rollback_owner" TEXT,
    "assignee_user_id" TEXT,
    "assigned_by" TEXT,
    "assigned_at" TIMESTAMPTZ(3),
    "state" "RecoveryState" NOT NULL DEFAULT 'open',
    "settled_by" TEXT,
    "note" TEXT,
    "evidence" TEXT,
    "changed_by" TEXT,
    "changed_at" TIMESTAMPTZ(3),
    "compensation_key" TEXT,
    "compensation_requested_at" TIMESTAMPTZ(3),
    "compensation_response" TEXT,
    "verified_at" TIMESTAMPTZ(3),
    "verified_effect" TEXT,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "overdue_notified_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "recovery_items_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "recovery_items_operation_id_key" ON "recovery_items"("operation_id");
CREATE UNIQUE INDEX "recovery_items_settlement_id_key" ON "recovery_items"("settlement_id");
CREATE INDEX "recovery_items_team_id_state_idx" ON "recovery_items"("team_id", "state");
CREATE INDEX "recovery_items_barrier_id_idx" ON "recovery_items"("barrier_id");
ALTER TABLE "recovery_items" ADD CONSTRAINT "recovery_items_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "recovery_items" ADD CONSTRAINT "recovery_items_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "recovery_items" ADD CONSTRAINT "recovery_items_barrier_id_fkey" FOREIGN KEY ("barrier_id") REFERENCES "barriers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "recovery_items" ADD CONSTRAINT "recovery_items_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "recovery_items" ADD CONSTRAINT "recovery_items_assignee_user_id_fkey" FOREIGN KEY ("assignee_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE OR REPLACE FUNCTION quiesce_default_owner(p_team_id text, p_run_id text, OUT user_id text, OUT chosen_by text)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    -- The person who owns work nobody else was named for: the team's setting, else who asked for the
    -- stop covering the run (a user, not a key or the system), else the team's first admin.
    SELECT t.default_reconciler_user_id INTO user_id
      FROM teams t JOIN memberships m ON m.team_id = t.id AND m.user_id = t.default_reconciler_user_id
     WHERE t.id = p_team_id;
    chosen_by := 'system:default-owner (team setting)';
    IF user_id IS NULL THEN
        SELECT m.user_id INTO user_id
          FROM runs r JOIN barriers b ON b.run_id = ANY (r.path)
          JOIN memberships m ON m.team_id = b.team_id AND b.requested_by LIKE 'user:%'
                            AND m.user_id = split_part(substr(b.requested_by, 6), ' ', 1)
         WHERE r.id = p_run_id
         ORDER BY b.requested_at DESC LIMIT 1;
        chosen_by := 'system:default-owner (asked for the stop)';
    END IF;
    IF user_id IS NULL THEN
        SELECT m.user_id INTO user_id FROM memberships m
         WHERE m.team_id = p_team_id AND m.role = 'admin' ORDER BY m.created_at, m.user_id LIMIT 1;
        chosen_by := 'system:default-owner (team admin)';
    END IF;
END;
$fn$;

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

    SELECT d.user_id, d.chosen_by INTO v_owner, v_by FROM quiesce_default_owner(NEW.team_id, NEW.run_id) d;
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

CREATE OR REPLACE FUNCTION quiesce_open_recovery() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_team text; v_run text; v_provider text; v_label text; v_owner text; v_by text; v_due integer;
BEGIN
    -- Runs at commit (a deferred trigger), so the effect receipt written after the settlement is seen.
    IF NEW.settled_state IS DISTINCT FROM 'completed_and_verified' THEN RETURN NULL; END IF;
    SELECT o.team_id, o.run_id, o.provider_name INTO v_team, v_run, v_provider FROM operations o WHERE o.id = NEW.operation_id;
    SELECT nullif(e.rollback_owner, '') INTO v_label FROM effect_receipts e
     WHERE e.operation_id = NEW.operation_id AND nullif(e.rollback_owner, '') IS NOT NULL ORDER BY e.created_at DESC LIMIT 1;
    IF v_label IS NULL THEN
        SELECT nullif(p.rollback_owner, '') INTO v_label FROM providers p WHERE p.team_id = v_team AND p.name = v_provider;
    END IF;
    SELECT d.user_id, d.chosen_by INTO v_owner, v_by FROM quiesce_default_owner(v_team, v_run) d;
    SELECT t.recovery_due_seconds INTO v_due FROM teams t WHERE t.id = v_team;
    INSERT INTO recovery_items (id, team_id, operation_id, barrier_id, settlement_id, provider_name, rollback_owner,
                                assignee_user_id, assigned_by, assigned_at, state, due_at)
    VALUES ('rcv_' || replace(gen_random_uuid()::text, '-', ''), v_team, NEW.operation_id, NEW.barrier_id, NEW.id, v_provider, v_label,
            v_owner, CASE WHEN v_owner IS NULL THEN NULL ELSE v_by END, CASE WHEN v_owner IS NULL THEN NULL ELSE clock_timestamp() END,
            'open', clock_timestamp() + make_interval(secs => coalesce(v_due, 86400)))
    ON CONFLICT (operation_id) DO NOTHING;
    RETURN NULL;
END;
$fn$;

CREATE CONSTRAINT TRIGGER "settlements_open_recovery" AFTER INSERT OR UPDATE OF "settled_state" ON "settlements"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW."settled_state" = 'completed_and_verified')
    EXECUTE FUNCTION quiesce_open_recovery();
