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
