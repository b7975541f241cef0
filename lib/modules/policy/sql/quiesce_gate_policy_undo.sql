CREATE OR REPLACE FUNCTION quiesce_gate_policy_undo(p_team text, p_op_row text, p_now timestamptz) RETURNS void
LANGUAGE sql
VOLATILE
AS $fn$
    -- A decision that reserved budgets and then did not admit the call (another budget, a lost probe, a lost
    -- race on the operationId) takes back exactly what it reserved, under the locks it still holds.
    WITH gone AS (
        DELETE FROM budget_reservations b
         WHERE b.team_id = p_team AND b.operation_row_id = p_op_row AND b.state = 'held' AND b.created_at = p_now::timestamptz(3)
        RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.amount)
    UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0)
      FROM (SELECT team_id, budget, scope_key, window_start, sum(amount) AS amount FROM gone
             GROUP BY team_id, budget, scope_key, window_start) s
     WHERE u.team_id = s.team_id AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
$fn$;
