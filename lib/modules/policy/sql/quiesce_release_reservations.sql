CREATE OR REPLACE FUNCTION quiesce_release_reservations() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_op text; v_cause text;
BEGIN
    -- Work that never started gives its reservation back, and so does a running call a stop settled as
    -- cancelled without effect (the provider's word); work with an unknown outcome keeps it (the spend may
    -- have happened); finished work keeps its estimate until the holder reports the actual cost.
    IF TG_TABLE_NAME = 'settlements' THEN
        IF NEW.settled_state IS DISTINCT FROM 'cancelled_without_effect'
           OR (TG_OP = 'UPDATE' AND OLD.settled_state IS NOT DISTINCT FROM NEW.settled_state) THEN
            RETURN NULL;
        END IF;
        v_op := NEW.operation_id; v_cause := 'cancelled_without_effect';
    ELSE
        IF NOT (NEW.state IN ('cancelled_not_started', 'denied') AND OLD.state IS DISTINCT FROM NEW.state) THEN
            RETURN NULL;
        END IF;
        v_op := NEW.id; v_cause := NEW.state::text;
    END IF;
    WITH rel AS (
        UPDATE budget_reservations b SET state = 'released', settled_at = clock_timestamp(), release_cause = v_cause
         WHERE b.operation_row_id = v_op AND b.state = 'held'
        RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.amount)
    UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0)
      FROM (SELECT team_id, budget, scope_key, window_start, sum(amount) AS amount FROM rel
             GROUP BY team_id, budget, scope_key, window_start) s
     WHERE u.team_id = s.team_id AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
    RETURN NULL;
END;
$fn$;
