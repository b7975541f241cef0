-- The gate's plans stay index lookups however the tables grow (docs/design/gate-plans.md): both gate
-- functions run with enable_seqscan = off; a run found by id compares its team with IS NOT DISTINCT FROM, so
-- the primary key is the only usable index; the batch's statement 1 stays a lookup per call (OFFSET 0).
-- Decisions do not change; the bodies are otherwise 20261202002300_gate_throughput's and 20261203003100_gate_batch's.

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
    p_probe_timeout_ms integer
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
    a_decision "Decision"; a_reason text;
    v_decision "Decision"; v_reason text; v_effect text; v_state text; v_cur integer; v_receipt jsonb;
    v_rows integer; v_attempt integer := 0;
    s_kill boolean; s_pause boolean;
BEGIN
    -- Statement 1 — authenticate, and find the run (for admit/heartbeat: through the operation).
    -- An unknown, revoked or expired key is unauthenticated; an operator key carries its user's CURRENT
    -- role (mirrors lib/control/authz.ts isAllowed(caller, "gate.ask"); see test/gate/auth.test.ts).
    -- Only immutable columns of the run are read here (root and path): the control state is read below,
    -- after the lock.
    IF p_source = 'gate' THEN
        -- The gate names its run: no operation to look up (change 5c).
        SELECT k.team_id, k.kind, coalesce(k.scopes, '{}'), CASE WHEN u.disabled_at IS NULL THEN m.role END, k.id, false,
               p_run_id, p_lease_id, p_epoch, r.root_run_id, r.path
          INTO v_team, v_kind, v_scopes, v_role, v_key_id, o_found, v_run, v_lease, v_epoch, v_root, v_path
          FROM api_keys k
          LEFT JOIN memberships m ON k.kind = 'operator' AND m.team_id = k.team_id AND m.user_id = k.user_id
          LEFT JOIN users u ON k.kind = 'operator' AND u.id = k.user_id
          LEFT JOIN runs r ON r.id = p_run_id AND r.team_id IS NOT DISTINCT FROM k.team_id
         WHERE k.secret_hash = p_key_hash AND k.revoked_at IS NULL
           AND (k.expires_at IS NULL OR k.expires_at > clock_timestamp());
    ELSE
        SELECT k.team_id, k.kind, coalesce(k.scopes, '{}'), CASE WHEN u.disabled_at IS NULL THEN m.role END, k.id, o.id IS NOT NULL,
               CASE WHEN p_source = 'gate' THEN p_run_id ELSE o.run_id END,
               CASE WHEN p_source = 'gate' THEN p_lease_id ELSE o.lease_id END,
               CASE WHEN p_source = 'gate' THEN p_epoch ELSE o.epoch_stamp END,
               r.root_run_id, r.path
          INTO v_team, v_kind, v_scopes, v_role, v_key_id, o_found, v_run, v_lease, v_epoch, v_root, v_path
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

    -- Serialize with lifecycle / kill writers (they hold this key exclusively). Everything below reads
    -- with a snapshot taken after the lock was granted.
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(v_root, 0));
    -- Serialize with stop-scope writers too (they hold the team's key exclusively): a scope that
    -- committed before this point is read below; one that commits later waited for this decision.
    PERFORM pg_advisory_xact_lock_shared(7114, hashtext(v_team));
    v_now := clock_timestamp();

    -- Statement 2 — every control fact in one read, with a snapshot taken after the lock: the ancestry
    -- (runs.path, root first), the lease chain (leases.path) and the existing operation, all by index.
    SELECT c.n, c.max_epoch, c.killed_self, c.killed_anc, c.paused, c.stale, c.blocked, c.claims,
           l.len, l.n, l.last, l.run_id, l.anc_revoked, l.own_revoked, l.expired, l.path, l.renew,
           o.id IS NOT NULL, o.id, o.run_id, o.state, o.state_reason, o.expires_at, o.outcome_detail,
           coalesce(sc.s_kill, false), coalesce(sc.s_pause, false)
      INTO c_n, c_max, c_killed_self, c_killed_anc, c_paused, c_stale, c_blocked, c_claims,
           l_len, l_n, l_last, l_run, l_anc_revoked, l_own_revoked, l_expired, l_path, l_renew,
           o_found, o_id, o_run, o_state, o_reason, o_expires, o_outcome,
           s_kill, s_pause
      FROM (SELECT count(*)::int AS n, max(r.epoch) AS max_epoch,
                   bool_or(r.lifecycle = 'killed' AND r.id = v_run) AS killed_self,
                   bool_or(r.lifecycle = 'killed' AND r.id <> v_run) AS killed_anc,
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
             WHERE s.team_id = v_team AND s.lifted_at IS NULL AND quiesce_scope_matches(s, r)) sc ON true;
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
            IF o_reason IN ('missing_state', 'killed', 'parent_revoked', 'lease_revoked', 'lease_expired', 'stale_epoch',
                            'operation_expired', 'breaker_open', 'already_applied') THEN v_reason := o_reason;
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
            INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, state_reason, started_at, finished_at, created_at, registered_by_key)
            VALUES (p_new_op_id, v_team, p_operation_id, v_run, v_lease, v_epoch, 'call', coalesce(p_tool, ''),
                    CASE WHEN v_effect = 'insert_running' THEN 'running'::"OperationState" ELSE 'denied'::"OperationState" END,
                    CASE WHEN v_effect = 'insert_denied' THEN v_reason END,
                    CASE WHEN v_effect = 'insert_running' THEN v_now END,
                    CASE WHEN v_effect = 'insert_denied' THEN v_now END,
                    v_now, v_key_id)
            ON CONFLICT (team_id, operation_id) DO NOTHING;
            v_rows := CASE WHEN FOUND THEN 1 ELSE 0 END;
        ELSIF v_effect = 'start' THEN
            UPDATE operations SET state = 'running', started_at = v_now, state_reason = NULL
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
    p_probe_timeout_ms integer
) RETURNS jsonb[]             -- answer i is the answer to call i, as quiesce_gate's
LANGUAGE plpgsql
VOLATILE
SET enable_seqscan = off
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
    -- decision (decideAuthority's order, as in quiesce_gate), the operation rows, the evidence rows and
    -- the answers of the calls decided here.
    WITH e AS MATERIALIZED (
        SELECT x.i::integer AS i, x.team, x.key_id, p_run_id[x.i] AS run_id, p_lease_id[x.i] AS lease_id,
               p_epoch[x.i] AS epoch, p_operation_id[x.i] AS op_id, p_tool[x.i] AS tool, p_new_op_id[x.i] AS new_id,
               r.path,
               count(*) OVER (PARTITION BY x.team, p_operation_id[x.i]) AS dup
          FROM unnest(v_team, v_key, v_root) WITH ORDINALITY AS x(team, key_id, root, i)
          JOIN runs r ON r.id = p_run_id[x.i] AND r.team_id IS NOT DISTINCT FROM x.team
         WHERE x.team IS NOT NULL AND x.root IS NOT NULL
    ), f AS MATERIALIZED (
        SELECT e.*, c.*, l.*, o.id IS NOT NULL AS o_found,
               coalesce(sc.s_kill, false) AS s_kill, coalesce(sc.s_pause, false) AS s_pause,
               CASE WHEN c.n = cardinality(e.path) AND e.path[cardinality(e.path)] = e.run_id THEN c.max_epoch END AS cur
          FROM e
          CROSS JOIN LATERAL (
                SELECT count(*)::int AS n, max(r.epoch) AS max_epoch,
                       bool_or(r.lifecycle = 'killed' AND r.id = e.run_id) AS killed_self,
                       bool_or(r.lifecycle = 'killed' AND r.id <> e.run_id) AS killed_anc,
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
                   WHEN f.l_anc_revoked THEN 'parent_revoked'
                   WHEN f.l_own_revoked THEN 'lease_revoked'
                   WHEN f.l_expired THEN 'lease_expired'
                   WHEN f.stale THEN 'stale_epoch'
                   WHEN f.blocked THEN 'breaker_open'
                   WHEN f.paused OR f.s_pause THEN 'paused'
                   ELSE 'allowed'
               END AS reason
          FROM f
    ), d AS MATERIALIZED (
        SELECT a.*,
               CASE a.reason WHEN 'allowed' THEN 'allow' WHEN 'paused' THEN 'hold' ELSE 'deny' END::"Decision" AS decision
          FROM a
         -- decided here: a new operationId, once in this batch, readable state, and for an allow nothing
         -- more to do than insert it (no probe to claim, no renewal due)
         WHERE NOT a.o_found AND a.dup = 1 AND a.reason <> 'missing_state'
           AND NOT (a.reason = 'allowed' AND (coalesce(a.claims, false) OR coalesce(a.l_renew, false)))
    ), ins AS (
        INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, state_reason,
                                started_at, finished_at, created_at, registered_by_key)
        SELECT d.new_id, d.team, d.op_id, d.run_id, d.lease_id, d.epoch, 'call', coalesce(d.tool, ''),
               CASE WHEN d.decision = 'allow' THEN 'running'::"OperationState" ELSE 'denied'::"OperationState" END,
               CASE WHEN d.decision = 'deny' THEN d.reason END,
               CASE WHEN d.decision = 'allow' THEN v_now END,
               CASE WHEN d.decision = 'deny' THEN v_now END,
               v_now, d.key_id
          FROM d WHERE d.decision <> 'hold'
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
             ORDER BY done.i)
      INTO v_done, v_answers
      FROM done;

    v_out := array_fill(NULL::jsonb, ARRAY[v_n]);
    FOR k IN 1 .. coalesce(cardinality(v_done), 0) LOOP
        v_out[v_done[k]] := v_answers[k];
    END LOOP;
    -- Everything else, one call at a time, by the single-call function (same transaction: it sees what
    -- this batch wrote, and re-takes locks this transaction already holds).
    FOR k IN 1 .. v_n LOOP
        IF v_out[k] IS NULL THEN
            v_out[k] := quiesce_gate('gate', p_key_hash[k], p_run_id[k], p_lease_id[k], p_epoch[k], p_operation_id[k],
                                     p_tool[k], p_new_op_id[k], p_cooldown_ms, p_probe_timeout_ms);
        END IF;
    END LOOP;
    RETURN v_out;
END;
$fn$;
