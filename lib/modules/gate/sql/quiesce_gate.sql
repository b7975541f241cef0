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
