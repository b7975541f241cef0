CREATE OR REPLACE FUNCTION quiesce_settle_reservations(p_op_row text, p_cost jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_team text; v_res quiesce_reservation[]; v_n integer;
BEGIN
    -- The holder's actual cost replaces each estimate it reported for; a unit it did not report keeps its estimate.
    SELECT o.team_id, o.budget_reservations INTO v_team, v_res FROM operations o WHERE o.id = p_op_row FOR UPDATE;
    IF v_res IS NULL THEN RETURN 0; END IF;
    WITH t AS MATERIALIZED (
        SELECT x.*, x.state = 'held' AND (x.unit = 'calls' OR p_cost ? x.unit) AS due,
               CASE WHEN x.unit = 'calls' THEN coalesce((p_cost ->> 'calls')::numeric, x.amount)
                    ELSE (p_cost ->> x.unit)::numeric END AS reported
          FROM unnest(v_res) WITH ORDINALITY AS x
    ), spent AS (
        UPDATE budget_usage u SET used = greatest(u.used + d.delta, 0), held = greatest(u.held - d.amount, 0)
          FROM (SELECT t.budget, t.scope_key, t.window_start, sum(t.reported - t.amount) AS delta, sum(t.amount) AS amount
                  FROM t WHERE t.due GROUP BY 1, 2, 3) d
         WHERE u.team_id = v_team AND u.budget = d.budget AND u.scope_key = d.scope_key AND u.window_start = d.window_start
    )
    SELECT array_agg(CASE WHEN t.due
                          THEN ROW(t.budget, t.scope_key, t.window_start, t.unit, t.amount, 'settled', t.reported, t.release_cause,
                                   clock_timestamp())::quiesce_reservation
                          ELSE ROW(t.budget, t.scope_key, t.window_start, t.unit, t.amount, t.state, t.actual, t.release_cause,
                                   t.settled_at)::quiesce_reservation END ORDER BY t.ordinality),
           count(*) FILTER (WHERE t.due)
      INTO v_res, v_n FROM t;
    IF v_n > 0 THEN UPDATE operations SET budget_reservations = v_res WHERE id = p_op_row; END IF;
    RETURN v_n;
END;
$fn$;
