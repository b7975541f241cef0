CREATE OR REPLACE FUNCTION quiesce_release_reservations() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    -- Work that never started gives its reservation back; work with an unknown outcome keeps it (the spend may
    -- have happened); finished work keeps its estimate until the holder reports the actual cost.
    IF NEW.state IN ('cancelled_not_started', 'denied') AND OLD.state IS DISTINCT FROM NEW.state THEN
        WITH rel AS (
            UPDATE budget_reservations b SET state = 'released', settled_at = clock_timestamp(),
                                             release_cause = NEW.state::text
             WHERE b.operation_row_id = NEW.id AND b.state = 'held'
            RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.amount)
        UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0)
          FROM (SELECT team_id, budget, scope_key, window_start, sum(amount) AS amount FROM rel
                 GROUP BY team_id, budget, scope_key, window_start) s
         WHERE u.team_id = s.team_id AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
    END IF;
    RETURN NULL;
END;
$fn$;
