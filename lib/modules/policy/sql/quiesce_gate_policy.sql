CREATE OR REPLACE FUNCTION quiesce_gate_policy(
    p_team text, p_version integer, p_rules quiesce_rule[], p_run text, p_root text, p_path text[], p_lease text, p_lease_path text[],
    p_epoch integer, p_operation_id text, p_tool text, p_harness text, p_agent text, p_creator text,
    p_args_digest text, p_args jsonb, p_cost jsonb, p_now timestamptz
) RETURNS quiesce_policy_verdict   -- the same steps as lib/control/policy.ts decidePolicy
LANGUAGE plpgsql
VOLATILE
AS $fn$
DECLARE
    r_rule quiesce_rule; r_ap record; v_scope text; v_window timestamptz;
    v_key text; v_id text; v_amount numeric;
    v_access boolean := false; v_reserve quiesce_reservation[];
    v_exhausted text; v_hold boolean := false; v_approval text;
    v_crossed integer;
BEGIN
    -- The enabled version's rules, from the team row (quiesce_policy_rules: access rules by position, then
    -- budgets by name): the first matching allow / deny / require_approval rule decides access, then every
    -- matching budget applies, in the order the batch locks usage rows in. (An array, not a query: opening
    -- a query costs every decision more than the rules' match does.)
    FOREACH r_rule IN ARRAY p_rules LOOP
        -- (a match of NULL, as in a WHERE clause, is no match)
        CONTINUE WHEN quiesce_rule_matches(r_rule, p_tool, p_harness, p_agent, p_creator, p_path) IS NOT TRUE;
        IF r_rule.effect <> 'budget' THEN
            CONTINUE WHEN v_access;
            v_access := true;
            IF r_rule.effect = 'deny' THEN
                RETURN ROW('deny', 'policy_denied', NULL, NULL, NULL)::quiesce_policy_verdict;
            ELSIF r_rule.effect = 'require_approval' THEN
                -- Bound to the run, the lease, the epoch, the operation and the arguments: any other call needs its own.
                v_key := md5(concat_ws('|', p_run, p_lease, p_epoch::text, p_operation_id, coalesce(p_args_digest, '-')));
                SELECT a.* INTO r_ap FROM approvals a WHERE a.team_id = p_team AND a.live_key = v_key;
                IF NOT FOUND THEN
                    v_id := 'apr_' || replace(gen_random_uuid()::text, '-', '');
                    INSERT INTO approvals (id, team_id, run_id, root_run_id, run_path, lease_id, lease_path, epoch, operation_id, tool,
                                           args_digest, arguments, policy_version, rule_name, approver_role, approver_user_ids,
                                           state, live_key, created_at, expires_at)
                    SELECT v_id, p_team, p_run, p_root, p_path, p_lease, p_lease_path, p_epoch, p_operation_id, p_tool,
                           p_args_digest, quiesce_redact(p_args, pv.redact_keys), p_version, r_rule.name,
                           coalesce(r_rule.approver_role, 'operator'), r_rule.approver_user_ids,
                           'pending', v_key, p_now, p_now + make_interval(secs => coalesce(r_rule.approval_ttl_seconds, 900))
                      FROM policy_versions pv WHERE pv.team_id = p_team AND pv.version = p_version
                    ON CONFLICT (team_id, live_key) DO NOTHING;
                    IF NOT FOUND THEN   -- a concurrent ask of the same call created it
                        SELECT a.id INTO v_id FROM approvals a WHERE a.team_id = p_team AND a.live_key = v_key;
                    ELSE
                        PERFORM pg_notify('quiesce_approvals', jsonb_build_object('teamId', p_team, 'approvalId', v_id)::text);
                    END IF;
                    RETURN ROW('hold', 'awaiting_approval', v_id, NULL, NULL)::quiesce_policy_verdict;
                END IF;
                IF r_ap.state IN ('pending', 'approved') AND r_ap.expires_at <= p_now THEN
                    UPDATE approvals SET state = 'expired', decided_at = coalesce(decided_at, r_ap.expires_at)
                     WHERE id = r_ap.id AND state IN ('pending', 'approved');
                    RETURN ROW('deny', 'approval_expired', r_ap.id, NULL, NULL)::quiesce_policy_verdict;
                ELSIF r_ap.state = 'pending' THEN
                    RETURN ROW('hold', 'awaiting_approval', r_ap.id, NULL, NULL)::quiesce_policy_verdict;
                ELSIF r_ap.state = 'denied' THEN
                    RETURN ROW('deny', 'approval_denied', r_ap.id, NULL, NULL)::quiesce_policy_verdict;
                ELSIF r_ap.state = 'expired' THEN
                    RETURN ROW('deny', 'approval_expired', r_ap.id, NULL, NULL)::quiesce_policy_verdict;
                END IF;
                v_approval := r_ap.id;   -- approved, in time: admitted (marked used once the operation is written)
            END IF;
            CONTINUE;
        END IF;

        -- A budget: checked and reserved in one statement under the usage row's lock (taken in name order), so
        -- concurrent callers can never together cross a limit. The gate writes the list with the operation.
        v_scope := CASE r_rule.budget_per WHEN 'run_tree' THEN p_root WHEN 'agent' THEN coalesce(p_agent, p_creator, '-') ELSE '-' END;
        v_window := CASE r_rule.budget_window WHEN 'minute' THEN date_trunc('minute', p_now) ELSE 'epoch'::timestamptz END;
        v_amount := CASE WHEN r_rule.budget_unit = 'calls' THEN coalesce((p_cost ->> 'calls')::numeric, 1)
                         ELSE coalesce((p_cost ->> r_rule.budget_unit)::numeric, 0) END;
        IF v_amount <= r_rule.budget_limit AND (v_amount > 0 OR r_rule.budget_limit > 0) THEN
            INSERT INTO budget_usage AS b (team_id, budget, scope_key, window_start, unit, used, held)
            VALUES (p_team, r_rule.name, v_scope, v_window, r_rule.budget_unit, v_amount, v_amount)
            ON CONFLICT (team_id, budget, scope_key, window_start) DO UPDATE SET used = b.used + EXCLUDED.used, held = b.held + EXCLUDED.held
             WHERE b.used + EXCLUDED.used <= r_rule.budget_limit AND (EXCLUDED.used > 0 OR b.used < r_rule.budget_limit);
            IF FOUND THEN
                v_reserve := v_reserve || ROW(r_rule.name, v_scope, v_window, r_rule.budget_unit, v_amount,
                                              'held', NULL, NULL, NULL)::quiesce_reservation;
                CONTINUE;
            END IF;
        END IF;
        v_exhausted := coalesce(v_exhausted, r_rule.name);
        v_hold := v_hold OR r_rule.budget_when_exhausted = 'hold';
        -- Crossing a budget acts once per window, by policy: trip the tree's breaker or pause it (never a kill).
        IF r_rule.budget_on_cross IN ('trip_breaker', 'pause') THEN
            INSERT INTO budget_crossings (id, team_id, budget, scope_key, window_start, run_id, root_run_id, action, crossed_at)
            VALUES ('bx_' || replace(gen_random_uuid()::text, '-', ''), p_team, r_rule.name, v_scope, v_window,
                    p_run, p_root, r_rule.budget_on_cross, p_now)
            ON CONFLICT (team_id, budget, scope_key, window_start) DO NOTHING;
            GET DIAGNOSTICS v_crossed = ROW_COUNT;
            IF v_crossed = 1 AND r_rule.budget_on_cross = 'trip_breaker' THEN
                UPDATE runs SET breaker = 'open', breaker_held = true, breaker_changed_at = p_now,
                                breaker_changed_by = 'system:budget', breaker_reason = 'budget ' || r_rule.name || ' exhausted',
                                breaker_probe_op_id = NULL
                 WHERE id = p_root AND NOT (breaker = 'open' AND breaker_held);
                IF FOUND THEN
                    PERFORM quiesce_append_audit(p_team, 'system:budget', 'breaker.trip', p_root, NULL,
                                                 jsonb_build_object('breaker', 'open', 'held', true, 'budget', r_rule.name,
                                                                    'reason', 'budget ' || r_rule.name || ' exhausted'));
                    PERFORM pg_notify('quiesce_control', jsonb_build_object('kind', 'breaker', 'teamId', p_team,
                                      'rootRunId', p_root, 'runIds', jsonb_build_array(p_root))::text);
                END IF;
            ELSIF v_crossed = 1 THEN
                UPDATE runs SET lifecycle = 'paused', lifecycle_changed_at = p_now, lifecycle_changed_by = 'system:budget',
                                lifecycle_reason = 'budget ' || r_rule.name || ' exhausted'
                 WHERE id = p_root AND lifecycle = 'normal';
                IF FOUND THEN
                    PERFORM quiesce_append_audit(p_team, 'system:budget', 'run.pause', p_root,
                                                 jsonb_build_object('lifecycle', 'normal'),
                                                 jsonb_build_object('lifecycle', 'paused', 'budget', r_rule.name,
                                                                    'reason', 'budget ' || r_rule.name || ' exhausted'));
                    PERFORM pg_notify('quiesce_control', jsonb_build_object('kind', 'pause', 'teamId', p_team,
                                      'rootRunId', p_root, 'runIds', jsonb_build_array(p_root))::text);
                END IF;
            END IF;
        END IF;
    END LOOP;
    IF v_exhausted IS NOT NULL THEN
        -- The budgets this call already reserved are given back: it is not admitted.
        IF v_reserve IS NOT NULL THEN PERFORM quiesce_budget_give_back(p_team, v_reserve, NULL); END IF;
        RETURN ROW(CASE WHEN v_hold THEN 'hold' ELSE 'deny' END, 'budget_exhausted', NULL, v_exhausted, NULL)::quiesce_policy_verdict;
    END IF;
    RETURN ROW('allow', 'allowed', v_approval, NULL, v_reserve)::quiesce_policy_verdict;
END;
$fn$;
