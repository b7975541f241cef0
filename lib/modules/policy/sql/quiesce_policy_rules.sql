CREATE OR REPLACE FUNCTION quiesce_policy_rules(p_team text, p_version integer) RETURNS quiesce_rule[]
LANGUAGE sql STABLE STRICT AS $$
    -- A policy version's rules as the gate reads them, kept on the team row while the version is enabled:
    -- allow / deny / require_approval rules by position (the first that matches decides access), then the
    -- budgets by name (the order usage rows are locked in). NULL for no version.
    SELECT coalesce(array_agg(ROW(pr.position, pr.name, pr.effect, pr.tool_regex, pr.harness, pr.agent, pr.subtree_run_id,
                                  pr.approval_ttl_seconds, pr.approver_role, pr.approver_user_ids, pr.budget_unit, pr.budget_limit,
                                  pr.budget_window, pr.budget_per, pr.budget_when_exhausted, pr.budget_on_cross)::quiesce_rule
                              ORDER BY pr.effect = 'budget', CASE WHEN pr.effect = 'budget' THEN pr.name END, pr.position),
                    '{}')
      FROM policy_rules pr
     WHERE pr.team_id = p_team AND pr.version = p_version
$$;
