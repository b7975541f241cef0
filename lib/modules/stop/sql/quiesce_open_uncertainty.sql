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
