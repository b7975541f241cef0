CREATE OR REPLACE FUNCTION quiesce_settle_reservations(p_op_row text, p_cost jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_n integer;
BEGIN
    -- The holder's actual cost replaces each estimate it reported for; a unit it did not report keeps its estimate.
    WITH s AS (
        UPDATE budget_reservations b
           SET actual = CASE WHEN b.unit = 'calls' THEN coalesce((p_cost ->> 'calls')::numeric, b.amount)
                             ELSE (p_cost ->> b.unit)::numeric END,
               state = 'settled', settled_at = clock_timestamp()
         WHERE b.operation_row_id = p_op_row AND b.state = 'held' AND (b.unit = 'calls' OR p_cost ? b.unit)
        RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.actual - b.amount AS delta)
    UPDATE budget_usage u SET used = greatest(u.used + d.delta, 0)
      FROM (SELECT team_id, budget, scope_key, window_start, sum(delta) AS delta FROM s
             GROUP BY team_id, budget, scope_key, window_start) d
     WHERE u.team_id = d.team_id AND u.budget = d.budget AND u.scope_key = d.scope_key AND u.window_start = d.window_start;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END;
$fn$;
