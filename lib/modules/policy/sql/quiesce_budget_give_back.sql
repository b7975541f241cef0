CREATE OR REPLACE FUNCTION quiesce_budget_give_back(p_team text, p_reservations jsonb, p_cause text) RETURNS jsonb
LANGUAGE plpgsql
VOLATILE
AS $fn$
BEGIN
    -- Gives back every reservation of the list still held (usage and held both drop by its amount) and returns
    -- the list with those marked released for p_cause. The gate also calls it for a decision that reserved and
    -- then did not admit the call (another budget, a lost probe, a lost race on the operationId).
    UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0), held = greatest(u.held - s.amount, 0)
      FROM (SELECT x ->> 'budget' AS budget, x ->> 'scopeKey' AS scope_key, (x ->> 'windowStart')::timestamptz AS window_start,
                   sum((x ->> 'amount')::numeric) AS amount
              FROM jsonb_array_elements(p_reservations) x
             WHERE x ->> 'state' = 'held'
             GROUP BY 1, 2, 3) s
     WHERE u.team_id = p_team AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
    RETURN (SELECT jsonb_agg(CASE WHEN x ->> 'state' = 'held'
                                  THEN x || jsonb_build_object('state', 'released', 'releaseCause', p_cause,
                                                               'settledAt', clock_timestamp())
                                  ELSE x END ORDER BY n)
              FROM jsonb_array_elements(p_reservations) WITH ORDINALITY AS t(x, n));
END;
$fn$;
