CREATE OR REPLACE FUNCTION quiesce_gate_policy_apply(
    p_team text, p_op_row text, p_operation_id text, p_run text, p_policy jsonb, p_now timestamptz
) RETURNS void                 -- after the operation is written running: the approval is used, the reservations held
LANGUAGE plpgsql
VOLATILE
AS $fn$
BEGIN
    IF p_policy ->> 'approvalId' IS NOT NULL THEN
        UPDATE approvals SET used_at = p_now, operation_row_id = p_op_row
         WHERE id = p_policy ->> 'approvalId' AND team_id = p_team AND used_at IS NULL;
    END IF;
    IF jsonb_array_length(coalesce(p_policy -> 'reserve', '[]'::jsonb)) > 0 THEN
        UPDATE budget_usage u SET used = u.used + (x ->> 'amount')::numeric
          FROM jsonb_array_elements(p_policy -> 'reserve') x
         WHERE u.team_id = p_team AND u.budget = x ->> 'budget' AND u.scope_key = x ->> 'scopeKey'
           AND u.window_start = (x ->> 'windowStart')::timestamptz;
        INSERT INTO budget_reservations (id, team_id, budget, scope_key, window_start, unit, operation_row_id, operation_id,
                                         run_id, amount, state, created_at)
        SELECT 'brs_' || replace(gen_random_uuid()::text, '-', ''), p_team, x ->> 'budget', x ->> 'scopeKey',
               (x ->> 'windowStart')::timestamptz, x ->> 'unit', p_op_row, p_operation_id, p_run, (x ->> 'amount')::numeric,
               'held', p_now
          FROM jsonb_array_elements(p_policy -> 'reserve') x;
    END IF;
END;
$fn$;
