CREATE OR REPLACE FUNCTION quiesce_budget_give_back(p_team text, p_reservations quiesce_reservation[], p_cause text)
RETURNS quiesce_reservation[]
LANGUAGE plpgsql
VOLATILE
AS $fn$
BEGIN
    -- Gives back every reservation of the list still held (usage and held both drop by its amount) and returns
    -- the list with those marked released for p_cause. The gate also calls it for a decision that reserved and
    -- then did not admit the call (another budget, a lost probe, a lost race on the operationId).
    UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0), held = greatest(u.held - s.amount, 0)
      FROM (SELECT x.budget, x.scope_key, x.window_start, sum(x.amount) AS amount
              FROM unnest(p_reservations) x
             WHERE x.state = 'held'
             GROUP BY 1, 2, 3) s
     WHERE u.team_id = p_team AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
    RETURN ARRAY(SELECT CASE WHEN x.state = 'held'
                             THEN ROW(x.budget, x.scope_key, x.window_start, x.unit, x.amount, 'released', x.actual, p_cause,
                                      clock_timestamp())::quiesce_reservation
                             ELSE ROW(x.budget, x.scope_key, x.window_start, x.unit, x.amount, x.state, x.actual, x.release_cause,
                                      x.settled_at)::quiesce_reservation END
                   FROM unnest(p_reservations) WITH ORDINALITY AS x
                  ORDER BY x.ordinality);
END;
$fn$;
