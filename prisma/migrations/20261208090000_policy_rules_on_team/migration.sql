-- The enabled policy version's rules are kept on the team row (quiesce_policy_rules, written when a version is
-- enabled) and the gate reads them with the version, in the row it already reads: its policy step walks an
-- array instead of opening a query on policy_rules in every decision.
CREATE TYPE quiesce_rule AS (position integer, name text, effect text, tool_regex text, harness "Harness", agent text,
                             subtree_run_id text, approval_ttl_seconds integer, approver_role "Role", approver_user_ids text[],
                             budget_unit text, budget_limit numeric, budget_window text, budget_per text,
                             budget_when_exhausted text, budget_on_cross text);
ALTER TABLE "teams" ADD COLUMN "policy_rules" quiesce_rule[];

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

UPDATE "teams" SET "policy_rules" = quiesce_policy_rules(id, policy_version) WHERE "policy_version" IS NOT NULL;
ALTER TABLE "teams" ADD CONSTRAINT "teams_policy_rules_check" CHECK (("policy_version" IS NULL) = ("policy_rules" IS NULL));

DROP FUNCTION quiesce_gate_policy(text, integer, text, text, text[], text, text[], integer, text, text, text, text, text, text, jsonb, jsonb, timestamptz);
DROP FUNCTION quiesce_rule_matches(policy_rules, text, text, text, text, text[]);

CREATE OR REPLACE FUNCTION quiesce_rule_matches(pr quiesce_rule, p_tool text, p_harness text, p_agent text, p_creator text,
                                                p_path text[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    -- Whether a policy rule applies to a call (lib/control/policy.ts ruleMatches): its tool glob, harness, agent
    -- (the run's own or its creator) and subtree (a run on the call's path). Inlined where it is called.
    SELECT (pr.tool_regex IS NULL OR p_tool ~ pr.tool_regex)
       AND (pr.harness IS NULL OR pr.harness::text = p_harness)
       AND (pr.agent IS NULL OR pr.agent = p_agent OR pr.agent = p_creator)
       AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (p_path))
$$;

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

CREATE OR REPLACE FUNCTION quiesce_gate(
    p_source text,            -- 'gate' | 'admit' | 'heartbeat'
    p_key_hash text,          -- sha256 hex of the bearer secret
    p_run_id text,            -- gate only (admit/heartbeat read it from the operation)
    p_lease_id text,          -- gate only
    p_epoch integer,          -- gate only: the caller's epoch stamp
    p_operation_id text,      -- the caller's idempotency key
    p_tool text,              -- gate only
    p_new_op_id text,         -- row id to use if this call creates the operation
    p_cooldown_ms integer,
    p_probe_timeout_ms integer,
    p_args_digest text,       -- gate only: sha256 of the call's canonical arguments (approvals bind to it)
    p_args jsonb,             -- gate only: the arguments an approver is shown (redacted by the policy)
    p_cost jsonb              -- gate only: the call's cost estimate by unit, reserved against budgets
) RETURNS jsonb
LANGUAGE plpgsql
VOLATILE
SET enable_seqscan = off
AS $fn$
DECLARE
    v_team text; v_kind "ApiKeyKind"; v_scopes text[]; v_role "Role"; v_key_id text; v_claimed boolean := false;
    v_run text := p_run_id; v_lease text := p_lease_id; v_epoch integer := p_epoch;
    v_root text; v_path text[];
    v_now timestamptz;
    v_cool interval := make_interval(secs => p_cooldown_ms / 1000.0);
    v_probe interval := make_interval(secs => p_probe_timeout_ms / 1000.0);
    -- ancestry facts
    c_n integer; c_max integer; c_killed_self boolean; c_killed_anc boolean; c_paused boolean;
    c_stale boolean; c_blocked boolean; c_claims text[];
    -- lease chain facts
    l_len integer; l_n integer; l_last text; l_run text; l_anc_revoked boolean; l_own_revoked boolean; l_expired boolean;
    l_path text[]; l_renew boolean; r_lease record; r_parent timestamptz; r_next timestamptz;
    -- the operation
    o_found boolean; o_id text; o_run text; o_state "OperationState"; o_reason text; o_expires timestamptz; o_outcome jsonb;
    o_regkey text; c_finished boolean; o_tool text;
    a_decision "Decision"; a_reason text;
    v_decision "Decision"; v_reason text; v_effect text; v_state text; v_cur integer; v_receipt jsonb;
    v_rows integer; v_attempt integer := 0;
    s_kill boolean; s_pause boolean;
    v_policy integer; v_rules quiesce_rule[]; v_pol quiesce_policy_verdict; v_harness text; v_agent text; v_creator text;
BEGIN
    -- Statement 1 — authenticate, and find the run (for admit/heartbeat: through the operation).
    -- An unknown, revoked or expired key is unauthenticated; an operator key carries its user's CURRENT
    -- role (mirrors lib/control/authz.ts isAllowed(caller, "gate.ask"); see test/gate/auth.test.ts).
    -- Only immutable columns of the run are read here (root, path, and the harness, agent and creator a
    -- policy rule matches): the control state is read below, after the lock.
    IF p_source = 'gate' THEN
        -- The gate names its run: no operation to look up (change 5c).
        SELECT k.team_id, k.kind, coalesce(k.scopes, '{}'), CASE WHEN u.disabled_at IS NULL THEN m.role END, k.id, false,
               p_run_id, p_lease_id, p_epoch, r.root_run_id, r.path, r.harness::text, r.native_agent_id, r.created_by
          INTO v_team, v_kind, v_scopes, v_role, v_key_id, o_found, v_run, v_lease, v_epoch, v_root, v_path,
               v_harness, v_agent, v_creator
          FROM api_keys k
          LEFT JOIN memberships m ON k.kind = 'operator' AND m.team_id = k.team_id AND m.user_id = k.user_id
          LEFT JOIN users u ON k.kind = 'operator' AND u.id = k.user_id
          LEFT JOIN runs r ON r.id = p_run_id AND r.team_id IS NOT DISTINCT FROM k.team_id
         WHERE k.secret_hash = p_key_hash AND k.revoked_at IS NULL
           AND (k.expires_at IS NULL OR k.expires_at > clock_timestamp());
    ELSE
        SELECT k.team_id, k.kind, coalesce(k.scopes, '{}'), CASE WHEN u.disabled_at IS NULL THEN m.role END, k.id, o.id IS NOT NULL,
               o.registered_by_key,
               CASE WHEN p_source = 'gate' THEN p_run_id ELSE o.run_id END,
               CASE WHEN p_source = 'gate' THEN p_lease_id ELSE o.lease_id END,
               CASE WHEN p_source = 'gate' THEN p_epoch ELSE o.epoch_stamp END,
               r.root_run_id, r.path, r.harness::text, r.native_agent_id, r.created_by
          INTO v_team, v_kind, v_scopes, v_role, v_key_id, o_found, o_regkey, v_run, v_lease, v_epoch, v_root, v_path,
               v_harness, v_agent, v_creator
          FROM api_keys k
          LEFT JOIN memberships m ON k.kind = 'operator' AND m.team_id = k.team_id AND m.user_id = k.user_id
          LEFT JOIN users u ON k.kind = 'operator' AND u.id = k.user_id
          LEFT JOIN operations o ON p_source <> 'gate' AND o.team_id = k.team_id AND o.operation_id = p_operation_id
          LEFT JOIN runs r ON r.team_id IS NOT DISTINCT FROM k.team_id AND r.id = CASE WHEN p_source = 'gate' THEN p_run_id ELSE o.run_id END
         WHERE k.secret_hash = p_key_hash AND k.revoked_at IS NULL
           AND (k.expires_at IS NULL OR k.expires_at > clock_timestamp());
    END IF;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('ok', false, 'code', 'unauthenticated', 'message', 'unknown, revoked or expired API key');
    END IF;
    -- coalesce: a NULL (no membership, so no role) must refuse, never fall through as "not false".
    IF NOT coalesce(v_kind IN ('agent', 'worker', 'gateway') OR (v_kind = 'operator' AND v_role = 'admin'), false)
       OR NOT coalesce(cardinality(v_scopes) = 0 OR '*' = ANY (v_scopes) OR 'gate.ask' = ANY (v_scopes), false) THEN
        RETURN jsonb_build_object('ok', false, 'code', 'forbidden', 'message', 'this key may not ask the gate');
    END IF;
    IF p_source <> 'gate' AND NOT o_found THEN
        RETURN jsonb_build_object('ok', false, 'code', 'not_found', 'message', 'operation not found');
    END IF;

    -- A missing run and another team's run answer identically (nothing leaks).
    IF v_root IS NULL OR v_path IS NULL OR cardinality(v_path) = 0 THEN
        INSERT INTO gate_decisions (team_id, run_id, operation_id, source, decision, reason, epoch_seen, current_epoch, at)
        VALUES (v_team, v_run, p_operation_id, p_source, 'deny', 'missing_state', v_epoch, NULL, clock_timestamp());
        RETURN jsonb_build_object('ok', true, 'decision', 'deny', 'reason', 'missing_state', 'currentEpoch', NULL, 'continue', false);
    END IF;

    -- Registered work answers only its holder: the key that registered it or its run (or an ancestor
    -- run), or a caller presenting a lease of one of those runs (p_lease_id). Same team is not enough.
    IF p_source <> 'gate' AND o_regkey IS DISTINCT FROM v_key_id
       AND NOT EXISTS (SELECT 1 FROM runs h WHERE h.id = ANY (v_path) AND h.holder_key_id = v_key_id)
       AND NOT (p_lease_id IS NOT NULL AND EXISTS (SELECT 1 FROM leases pl WHERE pl.id = p_lease_id AND pl.team_id = v_team
                                                                          AND pl.run_id = ANY (v_path))) THEN
        RETURN jsonb_build_object('ok', false, 'code', 'forbidden',
                                  'message', 'only the holder of this operation may ask for it: present its lease (leaseId)');
    END IF;

    -- Serialize with lifecycle / kill writers (they hold this key exclusively). Everything below reads
    -- with a snapshot taken after the lock was granted.
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(v_root, 0));
    -- Serialize with stop-scope writers too (they hold the team's key exclusively): a scope that
    -- committed before this point is read below; one that commits later waited for this decision.
    PERFORM pg_advisory_xact_lock_shared(7114, hashtext(v_team));
    v_now := clock_timestamp();

    -- Statement 2 — every control fact in one read, with a snapshot taken after the lock: the ancestry
    -- (runs.path, root first), the lease chain (leases.path) and the existing operation, all by index.
    SELECT c.n, c.max_epoch, c.killed_self, c.killed_anc, c.finished_self, c.paused, c.stale, c.blocked, c.claims,
           l.len, l.n, l.last, l.run_id, l.anc_revoked, l.own_revoked, l.expired, l.path, l.renew,
           o.id IS NOT NULL, o.id, o.run_id, o.state, o.state_reason, o.expires_at, o.outcome_detail, o.tool,
           coalesce(sc.s_kill, false), coalesce(sc.s_pause, false), tm.policy_version, tm.policy_rules
      INTO c_n, c_max, c_killed_self, c_killed_anc, c_finished, c_paused, c_stale, c_blocked, c_claims,
           l_len, l_n, l_last, l_run, l_anc_revoked, l_own_revoked, l_expired, l_path, l_renew,
           o_found, o_id, o_run, o_state, o_reason, o_expires, o_outcome, o_tool,
           s_kill, s_pause, v_policy, v_rules
      FROM (SELECT count(*)::int AS n, max(r.epoch) AS max_epoch,
                   bool_or(r.lifecycle = 'killed' AND r.id = v_run) AS killed_self,
                   bool_or(r.lifecycle = 'killed' AND r.id <> v_run) AS killed_anc,
                   bool_or(r.finished_at IS NOT NULL AND r.id = v_run) AS finished_self,
                   bool_or(r.lifecycle = 'paused') AS paused,
                   bool_or(v_epoch < r.epoch) AS stale,
                   bool_or((r.breaker = 'open' AND (r.breaker_held OR v_now < r.breaker_changed_at + v_cool))
                        OR (r.breaker = 'half_open' AND r.breaker_probe_op_id IS NOT NULL
                            AND r.breaker_probe_op_id <> p_operation_id AND v_now < r.breaker_changed_at + v_probe)) AS blocked,
                   array_agg(r.id) FILTER (WHERE (r.breaker = 'open' AND NOT r.breaker_held AND v_now >= r.breaker_changed_at + v_cool)
                        OR (r.breaker = 'half_open' AND (r.breaker_probe_op_id IS NULL
                            OR (r.breaker_probe_op_id <> p_operation_id AND v_now >= r.breaker_changed_at + v_probe)))) AS claims
              FROM runs r WHERE r.id = ANY (v_path) AND r.team_id IS NOT DISTINCT FROM v_team) c
      LEFT JOIN LATERAL (
            SELECT cardinality(own.path) AS len, count(x.id)::int AS n, own.path[cardinality(own.path)] AS last, own.run_id,
                   bool_or(x.revoked_at IS NOT NULL AND x.id <> own.id) AS anc_revoked,
                   bool_or(x.revoked_at IS NOT NULL AND x.id = own.id) AS own_revoked,
                   bool_or(x.valid_until <= v_now) AS expired,
                   own.path,
                   -- renewal is due when some lease of the chain has less than 90% of its idle window left
                   -- and can still grow (lib/control/lease.ts needsRenewal)
                   bool_or(x.revoked_at IS NULL AND x.max_valid_until IS NOT NULL AND x.valid_until < x.max_valid_until
                           AND x.valid_until < v_now + make_interval(secs => x.ttl_seconds * 0.9)) AS renew
              FROM leases own LEFT JOIN leases x ON x.id = ANY (own.path) AND x.team_id = v_team
             WHERE own.id = v_lease AND own.team_id = v_team
             GROUP BY own.id, own.path, own.run_id) l ON true
      LEFT JOIN operations o ON o.team_id = v_team AND o.operation_id = p_operation_id
      -- the team's live stop scopes that match the run or an ancestor (lib/control/fleet.ts scopeAuthority)
      LEFT JOIN LATERAL (
            SELECT bool_or(s.action = 'kill') AS s_kill, bool_or(s.action = 'pause') AS s_pause
              FROM stop_scopes s JOIN runs r ON r.id = ANY (v_path) AND r.team_id IS NOT DISTINCT FROM v_team
             WHERE s.team_id = v_team AND s.lifted_at IS NULL AND quiesce_scope_matches(s, r)) sc ON true
      -- the policy version current at decision time, and its rules (enabling one takes the team's scope key exclusively)
      LEFT JOIN teams tm ON tm.id = v_team;
    IF c_n <> cardinality(v_path) OR v_path[cardinality(v_path)] IS DISTINCT FROM v_run THEN
        v_cur := NULL;            -- an unreadable ancestor: no epoch is trustworthy
    ELSE
        v_cur := c_max;
    END IF;

    <<decide>>
    LOOP
        IF v_attempt > 0 THEN     -- lost a race on this operationId: read what the winner committed
            SELECT o.id, o.run_id, o.state, o.state_reason, o.expires_at, o.outcome_detail
              INTO o_id, o_run, o_state, o_reason, o_expires, o_outcome
              FROM operations o WHERE o.team_id = v_team AND o.operation_id = p_operation_id;
            o_found := FOUND;
        END IF;

        -- Current authority, first match wins (the same order as lib/control/gate.ts decideAuthority).
        a_decision := 'deny';
        IF v_cur IS NULL OR l_len IS NULL OR l_n <> l_len OR l_last IS DISTINCT FROM v_lease OR l_run IS DISTINCT FROM v_run THEN
            a_reason := 'missing_state';
        ELSIF c_killed_anc THEN a_reason := 'parent_revoked';
        ELSIF c_killed_self THEN a_reason := 'killed';
        ELSIF s_kill THEN a_reason := 'killed';
        ELSIF c_finished THEN a_reason := 'finished';
        ELSIF l_anc_revoked THEN a_reason := 'parent_revoked';
        ELSIF l_own_revoked THEN a_reason := 'lease_revoked';
        ELSIF l_expired THEN a_reason := 'lease_expired';
        ELSIF c_stale THEN a_reason := 'stale_epoch';
        ELSIF o_found AND o_expires IS NOT NULL AND o_expires <= v_now THEN a_reason := 'operation_expired';
        ELSIF c_blocked THEN a_reason := 'breaker_open';
        ELSIF c_paused OR s_pause THEN a_decision := 'hold'; a_reason := 'paused';
        ELSE a_decision := 'allow'; a_reason := 'allowed';
        END IF;

        -- Replay rules for an operationId that already exists.
        v_effect := 'none';
        IF NOT o_found THEN
            v_decision := a_decision; v_reason := a_reason;
            IF p_source <> 'gate' THEN v_decision := 'deny'; v_reason := 'missing_state';
            ELSIF a_decision = 'allow' THEN v_effect := 'insert_running';
            ELSIF a_decision = 'deny' AND a_reason <> 'missing_state' THEN v_effect := 'insert_denied';
            END IF;
        ELSIF o_run <> v_run THEN
            v_decision := 'deny'; v_reason := 'missing_state';
        ELSIF o_state IN ('succeeded', 'failed') THEN
            v_decision := 'deny'; v_reason := 'already_applied';
        ELSIF o_state = 'running' THEN
            v_decision := a_decision; v_reason := a_reason;
        ELSIF o_state IN ('denied', 'cancelled_not_started', 'aborted_unknown') THEN
            v_decision := 'deny';
            IF o_reason IN ('missing_state', 'killed', 'parent_revoked', 'finished', 'lease_revoked', 'lease_expired', 'stale_epoch',
                            'operation_expired', 'breaker_open', 'already_applied', 'policy_denied', 'approval_denied',
                            'approval_expired', 'budget_exhausted') THEN v_reason := o_reason;
            ELSIF o_state = 'denied' THEN v_reason := 'missing_state';
            ELSE v_reason := 'killed';
            END IF;
        ELSE -- queued / scheduled (kinds queued, scheduled, retry): registered work, decided now
            v_decision := a_decision; v_reason := a_reason;
            IF p_source <> 'heartbeat' THEN
                IF a_decision = 'allow' THEN v_effect := 'start';
                ELSIF a_decision = 'deny' THEN v_effect := 'deny_registered';
                END IF;
            END IF;
        END IF;

        -- The team's policy, for work the authority would admit now (lib/control/policy.ts decidePolicy):
        -- a deny rule, an approval bound to this call, the budgets' reservations (written with the operation
        -- below; an earlier attempt's are given back first).
        IF v_pol.reserve IS NOT NULL THEN PERFORM quiesce_budget_give_back(v_team, v_pol.reserve, NULL); END IF;
        v_pol := NULL;
        IF v_effect IN ('insert_running', 'start') AND v_policy IS NOT NULL THEN
            v_pol := quiesce_gate_policy(v_team, v_policy, v_rules, v_run, v_root, v_path, v_lease, l_path, v_epoch, p_operation_id,
                                         coalesce(p_tool, o_tool, ''), v_harness, v_agent, v_creator,
                                         p_args_digest, p_args, p_cost, v_now);
            IF v_pol.decision <> 'allow' THEN
                v_decision := v_pol.decision; v_reason := v_pol.reason;
                v_effect := CASE WHEN v_decision = 'hold' THEN 'none' WHEN v_effect = 'start' THEN 'deny_registered'
                                 ELSE 'insert_denied' END;
            END IF;
        END IF;

        -- A half-open breaker admits exactly one probe: claim it atomically or deny.
        IF v_effect IN ('insert_running', 'start') AND c_claims IS NOT NULL THEN
            BEGIN
                UPDATE runs r SET breaker = 'half_open', breaker_probe_op_id = p_operation_id, breaker_changed_at = v_now,
                                  breaker_changed_by = 'gate', breaker_reason = 'probe admitted'
                 WHERE r.id = ANY (c_claims)
                   AND ((r.breaker = 'open' AND NOT r.breaker_held AND v_now >= r.breaker_changed_at + v_cool)
                     OR (r.breaker = 'half_open' AND (r.breaker_probe_op_id IS NULL
                         OR (r.breaker_probe_op_id <> p_operation_id AND v_now >= r.breaker_changed_at + v_probe))));
                GET DIAGNOSTICS v_rows = ROW_COUNT;
                IF v_rows <> cardinality(c_claims) THEN
                    RAISE EXCEPTION 'probe taken' USING ERRCODE = 'QG001';
                END IF;
                v_claimed := true;
            EXCEPTION WHEN SQLSTATE 'QG001' THEN
                -- Another caller took the probe between our read and our claim.
                v_decision := 'deny'; v_reason := 'breaker_open';
                v_effect := CASE WHEN v_effect = 'start' THEN 'deny_registered' ELSE 'insert_denied' END;
            END;
        END IF;

        IF v_effect IN ('insert_running', 'insert_denied') THEN
            INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, state_reason, started_at, finished_at, created_at, registered_by_key,
                                    budget_reservations)
            VALUES (p_new_op_id, v_team, p_operation_id, v_run, v_lease, v_epoch, 'call', coalesce(p_tool, ''),
                    CASE WHEN v_effect = 'insert_running' THEN 'running'::"OperationState" ELSE 'denied'::"OperationState" END,
                    CASE WHEN v_effect = 'insert_denied' THEN v_reason END,
                    CASE WHEN v_effect = 'insert_running' THEN v_now END,
                    CASE WHEN v_effect = 'insert_denied' THEN v_now END,
                    v_now, v_key_id, CASE WHEN v_effect = 'insert_running' THEN v_pol.reserve END)
            ON CONFLICT (team_id, operation_id) DO NOTHING;
            v_rows := CASE WHEN FOUND THEN 1 ELSE 0 END;
        ELSIF v_effect = 'start' THEN
            UPDATE operations SET state = 'running', started_at = v_now, state_reason = NULL, budget_reservations = v_pol.reserve
             WHERE id = o_id AND state IN ('queued', 'scheduled');
            GET DIAGNOSTICS v_rows = ROW_COUNT;
        ELSIF v_effect = 'deny_registered' THEN
            UPDATE operations SET state = 'denied', state_reason = v_reason, finished_at = v_now
             WHERE id = o_id AND state IN ('queued', 'scheduled');
            GET DIAGNOSTICS v_rows = ROW_COUNT;
        ELSE
            v_rows := 1;
        END IF;
        -- Lost a race with a concurrent call on the same operationId: decide again as a replay.
        EXIT decide WHEN v_rows = 1;
        v_attempt := v_attempt + 1;
        IF v_attempt > 3 THEN RAISE EXCEPTION 'quiesce_gate: operation % keeps changing', p_operation_id; END IF;
    END LOOP;

    IF v_decision = 'allow' AND v_pol.approval_id IS NOT NULL THEN
        UPDATE approvals SET used_at = v_now, operation_row_id = CASE WHEN v_effect = 'start' THEN o_id ELSE p_new_op_id END
         WHERE id = v_pol.approval_id AND team_id = v_team AND used_at IS NULL;
    ELSIF v_decision <> 'allow' AND v_pol.reserve IS NOT NULL THEN   -- the probe went to another caller
        PERFORM quiesce_budget_give_back(v_team, v_pol.reserve, NULL);
    END IF;

    v_state := CASE v_effect
        WHEN 'insert_running' THEN 'running' WHEN 'start' THEN 'running'
        WHEN 'insert_denied' THEN 'denied' WHEN 'deny_registered' THEN 'denied'
        ELSE o_state::text END;

    -- Lease renewal: an allowed call or heartbeat renews the chain, root first, each lease to
    -- now + its ttl, capped by its max_valid_until and its parent's new valid_until, never backwards
    -- (lib/control/lease.ts renewChain). A lease's expiry therefore means "abandoned".
    IF l_renew AND a_decision = 'allow' AND v_decision = 'allow' THEN
        r_parent := NULL;
        FOR r_lease IN SELECT x.id, x.valid_until, x.ttl_seconds, x.max_valid_until, x.revoked_at
                         FROM unnest(l_path) WITH ORDINALITY p(id, ord) JOIN leases x ON x.id = p.id AND x.team_id = v_team
                        ORDER BY p.ord LOOP
            r_next := r_lease.valid_until;
            IF r_lease.revoked_at IS NULL AND r_lease.max_valid_until IS NOT NULL AND r_lease.valid_until < r_lease.max_valid_until
               AND r_lease.valid_until < v_now + make_interval(secs => r_lease.ttl_seconds * 0.9) THEN
                r_next := greatest(r_lease.valid_until,
                                   least(v_now + make_interval(secs => r_lease.ttl_seconds), r_lease.max_valid_until,
                                         coalesce(r_parent, 'infinity'::timestamptz)));
                IF r_next > r_lease.valid_until THEN
                    UPDATE leases SET valid_until = r_next WHERE id = r_lease.id;
                END IF;
            END IF;
            r_parent := r_next;
        END LOOP;
    END IF;

    IF p_source = 'heartbeat' THEN
        UPDATE operations SET last_heartbeat_at = v_now WHERE id = o_id;
        UPDATE runs SET last_heartbeat_at = v_now WHERE id = v_run;
    END IF;

    IF v_reason = 'already_applied' THEN
        SELECT jsonb_build_object('effectReceiptId', e.id, 'providerOperationId', e.provider_operation_id, 'detail', e.detail,
                                  'committedAt', e.committed_at, 'rollbackOwner', e.rollback_owner)
          INTO v_receipt FROM effect_receipts e WHERE e.operation_id = o_id ORDER BY e.committed_at DESC LIMIT 1;
    END IF;

    -- The breaker transition this call made (it admitted the probe) is audited and announced in this
    -- same statement, so the transition and its audit row commit together (change 5a).
    IF v_claimed AND v_decision = 'allow' THEN
        PERFORM quiesce_append_audit(v_team, 'system:gate', 'breaker.probe_admitted', r.id,
                                     jsonb_build_object('breaker', 'open'),
                                     jsonb_build_object('breaker', 'half_open', 'failures', r.breaker_failures,
                                                        'probeOperationId', p_operation_id, 'source', p_source))
           FROM runs r WHERE r.id = ANY (c_claims) AND r.team_id IS NOT DISTINCT FROM v_team
          ORDER BY array_position(v_path, r.id);
        PERFORM pg_notify('quiesce_control', jsonb_build_object('kind', 'breaker', 'teamId', v_team, 'rootRunId', v_root,
                                                                'runIds', to_jsonb(c_claims))::text);
    END IF;

    INSERT INTO gate_decisions (team_id, run_id, operation_id, source, decision, reason, epoch_seen, current_epoch, at)
    VALUES (v_team, v_run, p_operation_id, p_source, v_decision, v_reason, v_epoch, v_cur, v_now);

    RETURN jsonb_build_object(
        'ok', true, 'decision', v_decision, 'reason', v_reason, 'currentEpoch', v_cur,
        'continue', v_decision <> 'deny',
        'approvalId', v_pol.approval_id, 'budget', v_pol.budget,
        'operation', CASE WHEN v_state IS NULL THEN NULL ELSE jsonb_strip_nulls(jsonb_build_object(
            'operationId', p_operation_id, 'state', v_state,
            'outcomeDetail', CASE WHEN v_reason = 'already_applied' THEN o_outcome END,
            'effectReceipt', v_receipt)) END);
END;
$fn$;

CREATE OR REPLACE FUNCTION quiesce_gate_batch(
    p_key_hash text[],
    p_run_id text[],
    p_lease_id text[],
    p_epoch integer[],
    p_operation_id text[],
    p_tool text[],
    p_new_op_id text[],       -- row ids for operations this batch creates
    p_cooldown_ms integer,
    p_probe_timeout_ms integer,
    p_extra jsonb             -- a JSON array, entry i for call i: {digest, args, cost} or null (quiesce_gate's last three)
) RETURNS jsonb[]             -- answer i is the answer to call i, as quiesce_gate's
LANGUAGE plpgsql
VOLATILE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $fn$
DECLARE
    v_n integer := cardinality(p_operation_id);
    v_cool interval := make_interval(secs => p_cooldown_ms / 1000.0);
    v_probe interval := make_interval(secs => p_probe_timeout_ms / 1000.0);
    v_team text[]; v_key text[]; v_root text[];
    v_now timestamptz;
    v_done integer[]; v_answers jsonb[];
    v_out jsonb[];
    k integer;
    v_back jsonb;
BEGIN
    IF v_n IS NULL OR v_n = 0 THEN RETURN '{}'::jsonb[]; END IF;
    IF cardinality(p_key_hash) <> v_n OR cardinality(p_run_id) <> v_n OR cardinality(p_lease_id) <> v_n
       OR cardinality(p_epoch) <> v_n OR cardinality(p_tool) <> v_n OR cardinality(p_new_op_id) <> v_n THEN
        RAISE EXCEPTION 'quiesce_gate_batch: argument arrays differ in length';
    END IF;

    -- Statement 1: authenticate and authorize every call and find its run's (immutable) root, as
    -- quiesce_gate statement 1 does. A call whose key may not ask or whose run is not found gets a NULL
    -- team / root here and is answered by quiesce_gate below (unauthenticated / forbidden / missing_state).
    SELECT array_agg(a.team ORDER BY x.i), array_agg(a.key_id ORDER BY x.i), array_agg(a.root ORDER BY x.i)
      INTO v_team, v_key, v_root
      FROM unnest(p_key_hash, p_run_id) WITH ORDINALITY AS x(h, run, i)
      LEFT JOIN LATERAL (
            SELECT k.team_id AS team, k.id AS key_id, r.root_run_id AS root
              FROM api_keys k
              LEFT JOIN memberships m ON k.kind = 'operator' AND m.team_id = k.team_id AND m.user_id = k.user_id
              LEFT JOIN users u ON k.kind = 'operator' AND u.id = k.user_id
              JOIN runs r ON r.id = x.run AND r.team_id IS NOT DISTINCT FROM k.team_id
             WHERE k.secret_hash = x.h AND k.revoked_at IS NULL
               AND (k.expires_at IS NULL OR k.expires_at > clock_timestamp())
               AND coalesce(k.kind IN ('agent', 'worker', 'gateway')
                            OR (k.kind = 'operator' AND CASE WHEN u.disabled_at IS NULL THEN m.role END = 'admin'), false)
               AND coalesce(cardinality(coalesce(k.scopes, '{}')) = 0 OR '*' = ANY (k.scopes) OR 'gate.ask' = ANY (k.scopes), false)
               AND r.root_run_id IS NOT NULL AND cardinality(r.path) > 0
            -- OFFSET 0 keeps this a per-call lookup (key by hash, run by id): flattened into the join,
            -- a plan made on small tables read every run once and filtered (see the top of this file)
            OFFSET 0) a ON true;

    -- The locks, in one global order: tree keys sorted, then team scope keys sorted.
    PERFORM pg_advisory_xact_lock_shared(t.key)
       FROM (SELECT DISTINCT hashtextextended(r, 0) AS key FROM unnest(v_root) AS r WHERE r IS NOT NULL ORDER BY 1) t;
    PERFORM pg_advisory_xact_lock_shared(7114, t.key)
       FROM (SELECT DISTINCT hashtext(tm) AS key FROM unnest(v_team) AS tm WHERE tm IS NOT NULL ORDER BY 1) t;
    v_now := clock_timestamp();

    -- Statement 2: every control fact of every call (a snapshot taken after all the locks), the
    -- decision (decideAuthority's order, as in quiesce_gate), the team policy's part, the reservations,
    -- the operation rows, the evidence rows and the answers of the calls decided here.
    WITH e AS MATERIALIZED (
        SELECT x.i::integer AS i, x.team, x.key_id, p_run_id[x.i] AS run_id, p_lease_id[x.i] AS lease_id,
               p_epoch[x.i] AS epoch, p_operation_id[x.i] AS op_id, p_tool[x.i] AS tool, p_new_op_id[x.i] AS new_id,
               r.path, r.root_run_id AS root, r.harness::text AS harness, r.native_agent_id AS agent, r.created_by AS creator,
               count(*) OVER (PARTITION BY x.team, p_operation_id[x.i]) AS dup
          FROM unnest(v_team, v_key, v_root) WITH ORDINALITY AS x(team, key_id, root, i)
          JOIN runs r ON r.id = p_run_id[x.i] AND r.team_id IS NOT DISTINCT FROM x.team
         WHERE x.team IS NOT NULL AND x.root IS NOT NULL
    ), rules AS MATERIALIZED (
        -- the enabled versions' rules (kept on the team row: quiesce_policy_rules), read once for the whole batch
        SELECT pr AS rule, tm.id AS team_id, pr.effect, pr.position, pr.name, pr.budget_unit, pr.budget_limit, pr.budget_per,
               CASE pr.budget_window WHEN 'minute' THEN date_trunc('minute', v_now) ELSE 'epoch'::timestamptz END AS win
          FROM teams tm CROSS JOIN LATERAL unnest(tm.policy_rules) AS pr
         WHERE tm.id = ANY (v_team) AND tm.policy_rules IS NOT NULL
    ), m AS MATERIALIZED (
        -- The policy's part (quiesce_rule_matches, as in quiesce_gate_policy): every matching rule of every call
        -- of a team with a policy. A deny rule is decided here; so is a call whose every budget the reservations
        -- below take with every call of this batch counted (then any order of the calls would have admitted
        -- it). Anything else — an approval, a budget that does not fit — goes to quiesce_gate.
        SELECT e.i, e.team, pr.effect, pr.position, pr.name, pr.budget_unit AS unit, pr.budget_limit AS lim,
               CASE pr.budget_per WHEN 'run_tree' THEN e.root
                                  WHEN 'agent' THEN coalesce(e.agent, e.creator, '-') ELSE '-' END AS scope,
               pr.win,
               CASE WHEN pr.budget_unit = 'calls' THEN coalesce((p_extra -> (e.i - 1) -> 'cost' ->> 'calls')::numeric, 1)
                    ELSE coalesce((p_extra -> (e.i - 1) -> 'cost' ->> pr.budget_unit)::numeric, 0) END AS amount
          FROM e
          JOIN rules pr ON pr.team_id = e.team
               AND quiesce_rule_matches(pr.rule, coalesce(e.tool, ''), e.harness, e.agent, e.creator, e.path)
    ), acc AS MATERIALIZED (
        -- each call's first matching access rule (by position), if any
        SELECT DISTINCT ON (m.i) m.i, m.effect FROM m WHERE m.effect <> 'budget' ORDER BY m.i, m.position
    ), pairs AS NOT MATERIALIZED (
        SELECT m.i, m.team, m.name, m.unit, m.lim, m.scope, m.win, m.amount FROM m WHERE m.effect = 'budget'
    ), f AS MATERIALIZED (
        SELECT e.*, c.*, l.*, o.id IS NOT NULL AS o_found,
               coalesce(sc.s_kill, false) AS s_kill, coalesce(sc.s_pause, false) AS s_pause,
               CASE WHEN c.n = cardinality(e.path) AND e.path[cardinality(e.path)] = e.run_id THEN c.max_epoch END AS cur
          FROM e
          CROSS JOIN LATERAL (
                SELECT count(*)::int AS n, max(r.epoch) AS max_epoch,
                       bool_or(r.lifecycle = 'killed' AND r.id = e.run_id) AS killed_self,
                       bool_or(r.lifecycle = 'killed' AND r.id <> e.run_id) AS killed_anc,
                       bool_or(r.finished_at IS NOT NULL AND r.id = e.run_id) AS finished_self,
                       bool_or(r.lifecycle = 'paused') AS paused,
                       bool_or(e.epoch < r.epoch) AS stale,
                       bool_or((r.breaker = 'open' AND (r.breaker_held OR v_now < r.breaker_changed_at + v_cool))
                            OR (r.breaker = 'half_open' AND r.breaker_probe_op_id IS NOT NULL
                                AND r.breaker_probe_op_id <> e.op_id AND v_now < r.breaker_changed_at + v_probe)) AS blocked,
                       bool_or((r.breaker = 'open' AND NOT r.breaker_held AND v_now >= r.breaker_changed_at + v_cool)
                            OR (r.breaker = 'half_open' AND (r.breaker_probe_op_id IS NULL
                                OR (r.breaker_probe_op_id <> e.op_id AND v_now >= r.breaker_changed_at + v_probe)))) AS claims
                  FROM runs r WHERE r.id = ANY (e.path) AND r.team_id IS NOT DISTINCT FROM e.team) c
          LEFT JOIN LATERAL (
                SELECT cardinality(own.path) AS l_len, count(x.id)::int AS l_n, own.path[cardinality(own.path)] AS l_last,
                       own.run_id AS l_run,
                       bool_or(x.revoked_at IS NOT NULL AND x.id <> own.id) AS l_anc_revoked,
                       bool_or(x.revoked_at IS NOT NULL AND x.id = own.id) AS l_own_revoked,
                       bool_or(x.valid_until <= v_now) AS l_expired,
                       bool_or(x.revoked_at IS NULL AND x.max_valid_until IS NOT NULL AND x.valid_until < x.max_valid_until
                               AND x.valid_until < v_now + make_interval(secs => x.ttl_seconds * 0.9)) AS l_renew
                  FROM leases own LEFT JOIN leases x ON x.id = ANY (own.path) AND x.team_id = e.team
                 WHERE own.id = e.lease_id AND own.team_id = e.team
                 GROUP BY own.id, own.path, own.run_id) l ON true
          LEFT JOIN operations o ON o.team_id = e.team AND o.operation_id = e.op_id
          LEFT JOIN LATERAL (
                SELECT bool_or(s.action = 'kill') AS s_kill, bool_or(s.action = 'pause') AS s_pause
                  FROM stop_scopes s JOIN runs r ON r.id = ANY (e.path) AND r.team_id IS NOT DISTINCT FROM e.team
                 WHERE s.team_id = e.team AND s.lifted_at IS NULL AND quiesce_scope_matches(s, r)) sc ON true
    ), a AS MATERIALIZED (
        SELECT f.*,
               CASE
                   WHEN f.cur IS NULL OR f.l_len IS NULL OR f.l_n <> f.l_len OR f.l_last IS DISTINCT FROM f.lease_id
                        OR f.l_run IS DISTINCT FROM f.run_id THEN 'missing_state'
                   WHEN f.killed_anc THEN 'parent_revoked'
                   WHEN f.killed_self THEN 'killed'
                   WHEN f.s_kill THEN 'killed'
                   WHEN f.finished_self THEN 'finished'
                   WHEN f.l_anc_revoked THEN 'parent_revoked'
                   WHEN f.l_own_revoked THEN 'lease_revoked'
                   WHEN f.l_expired THEN 'lease_expired'
                   WHEN f.stale THEN 'stale_epoch'
                   WHEN f.blocked THEN 'breaker_open'
                   WHEN f.paused OR f.s_pause THEN 'paused'
                   WHEN acc.effect = 'deny' THEN 'policy_denied'
                   ELSE 'allowed'
               END AS reason,
               coalesce(acc.effect = 'require_approval', false) AS complex
          FROM f LEFT JOIN acc ON acc.i = f.i
    ), c AS MATERIALIZED (
        SELECT a.i, a.team, a.key_id, a.run_id, a.lease_id, a.epoch, a.op_id, a.tool, a.new_id, a.cur, a.reason,
               CASE a.reason WHEN 'allowed' THEN 'allow' WHEN 'paused' THEN 'hold' ELSE 'deny' END::"Decision" AS decision
          FROM a
         -- decided here: a new operationId, once in this batch, readable state, and for an allow nothing
         -- more to do than reserve and insert it (no probe to claim, no renewal due, no approval)
         WHERE NOT a.o_found AND a.dup = 1 AND a.reason <> 'missing_state'
           AND NOT (a.reason = 'allowed' AND (coalesce(a.claims, false) OR coalesce(a.l_renew, false) OR a.complex))
    ), due AS MATERIALIZED (
        -- what the allowed calls reserve, per usage row, in the one order rows are locked in (budget, scope).
        -- (the allowed calls as one array: a semi-join on c would read c again for every pair)
        SELECT p.team AS team_id, p.name AS budget, p.scope AS scope_key, p.win AS window_start, min(p.unit) AS unit,
               sum(p.amount) AS amount, min(p.lim) AS lim
          FROM pairs p
         WHERE p.i = ANY ((SELECT array_agg(c.i) FROM c WHERE c.decision = 'allow')::integer[])
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ), upd AS (
        -- each usage row reserved and checked against its limit as committed now (a concurrent batch's
        -- reservation is waited for and counted), as quiesce_gate_policy's upsert does for one call
        UPDATE budget_usage u SET used = u.used + due.amount, held = u.held + due.amount
          FROM due
         WHERE u.team_id = due.team_id AND u.budget = due.budget AND u.scope_key = due.scope_key AND u.window_start = due.window_start
           AND u.used + due.amount <= due.lim AND (due.amount > 0 OR u.used < due.lim)
        RETURNING u.team_id, u.budget, u.scope_key, u.window_start
    ), new AS (
        -- a usage row not there yet (a row that is there and did not fit, or one a concurrent batch created
        -- meanwhile, conflicts: nothing is reserved on it)
        INSERT INTO budget_usage (team_id, budget, scope_key, window_start, unit, used, held)
        SELECT due.team_id, due.budget, due.scope_key, due.window_start, due.unit, due.amount, due.amount FROM due
         WHERE (SELECT count(*) FROM upd) < (SELECT count(*) FROM due)   -- (a row for each, usually: nothing to insert)
           AND due.amount <= due.lim AND (due.amount > 0 OR due.lim > 0)
           AND NOT EXISTS (SELECT 1 FROM upd WHERE upd.team_id = due.team_id AND upd.budget = due.budget
                                               AND upd.scope_key = due.scope_key AND upd.window_start = due.window_start)
         ORDER BY 1, 2, 3, 4
        ON CONFLICT (team_id, budget, scope_key, window_start) DO NOTHING
        RETURNING team_id, budget, scope_key, window_start
    ), got AS MATERIALIZED (
        SELECT * FROM upd UNION ALL SELECT * FROM new
    ), short AS MATERIALIZED (
        -- allowed calls with a budget not reserved: decided by quiesce_gate (exhausted, or its crossing acts)
        SELECT DISTINCT p.i FROM c JOIN pairs p ON p.i = c.i
         WHERE (SELECT count(*) FROM got) < (SELECT count(*) FROM due)   -- (every row took its reservations, usually)
           AND c.decision = 'allow'
           AND NOT EXISTS (SELECT 1 FROM got g WHERE g.team_id = p.team AND g.budget = p.name AND g.scope_key = p.scope
                                                 AND g.window_start = p.win)
    ), held AS MATERIALIZED (
        -- each allowed call's reservations, written with its operation (or given back below when it is not)
        SELECT p.i, array_agg(ROW(p.name, p.scope, p.win, p.unit, p.amount, 'held', NULL, NULL, NULL)::quiesce_reservation
                              ORDER BY p.name) AS reserve
          FROM pairs p
         WHERE p.i = ANY ((SELECT array_agg(c.i) FROM c WHERE c.decision = 'allow')::integer[])
         GROUP BY p.i
    ), d AS NOT MATERIALIZED (
        SELECT c.* FROM c WHERE c.i NOT IN (SELECT short.i FROM short)
    ), ins AS (
        INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, state_reason,
                                started_at, finished_at, created_at, registered_by_key, budget_reservations)
        SELECT d.new_id, d.team, d.op_id, d.run_id, d.lease_id, d.epoch, 'call', coalesce(d.tool, ''),
               CASE WHEN d.decision = 'allow' THEN 'running'::"OperationState" ELSE 'denied'::"OperationState" END,
               CASE WHEN d.decision = 'deny' THEN d.reason END,
               CASE WHEN d.decision = 'allow' THEN v_now END,
               CASE WHEN d.decision = 'deny' THEN v_now END,
               v_now, d.key_id, CASE WHEN d.decision = 'allow' THEN held.reserve END
          FROM d LEFT JOIN held ON held.i = d.i WHERE d.decision <> 'hold'
        ON CONFLICT (team_id, operation_id) DO NOTHING
        RETURNING team_id, operation_id
    ), done AS MATERIALIZED (
        -- a hold records no operation; an insert that lost to a concurrent call is answered below
        SELECT d.* FROM d
         WHERE d.decision = 'hold' OR EXISTS (SELECT 1 FROM ins WHERE ins.team_id = d.team AND ins.operation_id = d.op_id)
    ), ev AS (
        INSERT INTO gate_decisions (team_id, run_id, operation_id, source, decision, reason, epoch_seen, current_epoch, at)
        SELECT done.team, done.run_id, done.op_id, 'gate', done.decision, done.reason, done.epoch, done.cur, v_now FROM done
    )
    SELECT array_agg(done.i ORDER BY done.i),
           array_agg(jsonb_build_object(
               'ok', true, 'decision', done.decision, 'reason', done.reason, 'currentEpoch', done.cur,
               'continue', done.decision <> 'deny',
               'operation', CASE WHEN done.decision = 'hold' THEN NULL ELSE jsonb_build_object(
                   'operationId', done.op_id, 'state', CASE WHEN done.decision = 'allow' THEN 'running' ELSE 'denied' END) END)
             ORDER BY done.i),
           -- what allowed calls not admitted here reserved on the rows that took them: given back below (as JSON
           -- pairs of a team and its rows, only on this rare path)
           (SELECT jsonb_agg(jsonb_build_object('team', c.team, 'reserve',
                                                (SELECT to_jsonb(array_agg(x)) FROM unnest(held.reserve) AS x
                                                  WHERE EXISTS (SELECT 1 FROM got g WHERE g.team_id = c.team AND g.budget = x.budget
                                                                                      AND g.scope_key = x.scope_key
                                                                                      AND g.window_start = x.window_start))))
              FROM c JOIN held ON held.i = c.i
             WHERE ((SELECT count(*) FROM short) > 0 OR (SELECT count(*) FROM ins) < (SELECT count(*) FROM d WHERE d.decision <> 'hold'))
               AND NOT EXISTS (SELECT 1 FROM ins WHERE ins.team_id = c.team AND ins.operation_id = c.op_id))
      INTO v_done, v_answers, v_back
      FROM done;
    -- A call not admitted here holds nothing: another of its budgets did not fit, or a concurrent call took
    -- its operationId. Given back under the locks this transaction holds, before quiesce_gate decides it.
    FOR k IN 0 .. coalesce(jsonb_array_length(v_back), 0) - 1 LOOP
        IF v_back -> k -> 'reserve' <> 'null'::jsonb THEN
            PERFORM quiesce_budget_give_back(v_back -> k ->> 'team',
                                             ARRAY(SELECT jsonb_populate_recordset(NULL::quiesce_reservation, v_back -> k -> 'reserve')),
                                             NULL);
        END IF;
    END LOOP;

    v_out := array_fill(NULL::jsonb, ARRAY[v_n]);
    FOR k IN 1 .. coalesce(cardinality(v_done), 0) LOOP
        v_out[v_done[k]] := v_answers[k];
    END LOOP;
    -- Everything else, one call at a time, by the single-call function (same transaction: it sees what
    -- this batch wrote, and re-takes locks this transaction already holds).
    FOR k IN 1 .. v_n LOOP
        IF v_out[k] IS NULL THEN
            v_out[k] := quiesce_gate('gate', p_key_hash[k], p_run_id[k], p_lease_id[k], p_epoch[k], p_operation_id[k],
                                     p_tool[k], p_new_op_id[k], p_cooldown_ms, p_probe_timeout_ms,
                                     p_extra -> (k - 1) ->> 'digest', p_extra -> (k - 1) -> 'args', p_extra -> (k - 1) -> 'cost');
        END IF;
    END LOOP;
    RETURN v_out;
END;
$fn$;
