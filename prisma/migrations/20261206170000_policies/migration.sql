-- Policy in the gate (docs/policies.md): versioned rules per team, approvals bound to one call, budgets
-- reserved inside the gate's statement, and the triggers that void approvals and release reservations.
ALTER TABLE "teams" ADD COLUMN "policy_version" INTEGER;

CREATE TABLE "policy_versions" (
    "team_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "redact_keys" TEXT[],
    "note" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "policy_versions_pkey" PRIMARY KEY ("team_id", "version")
);
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "policy_rules" (
    "team_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "tool_regex" TEXT,
    "harness" "Harness",
    "agent" TEXT,
    "subtree_run_id" TEXT,
    "effect" TEXT NOT NULL,
    "approval_ttl_seconds" INTEGER,
    "approver_role" "Role",
    "approver_user_ids" TEXT[],
    "budget_unit" TEXT,
    "budget_limit" DECIMAL(65,30),
    "budget_window" TEXT,
    "budget_per" TEXT,
    "budget_when_exhausted" TEXT,
    "budget_on_cross" TEXT,
    CONSTRAINT "policy_rules_pkey" PRIMARY KEY ("team_id", "version", "position")
);
ALTER TABLE "policy_rules" ADD CONSTRAINT "policy_rules_team_id_version_fkey" FOREIGN KEY ("team_id", "version") REFERENCES "policy_versions"("team_id", "version") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "approvals" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "root_run_id" TEXT NOT NULL,
    "run_path" TEXT[],
    "lease_id" TEXT NOT NULL,
    "lease_path" TEXT[],
    "epoch" INTEGER NOT NULL,
    "operation_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "args_digest" TEXT,
    "arguments" JSONB,
    "policy_version" INTEGER NOT NULL,
    "rule_name" TEXT NOT NULL,
    "approver_role" "Role" NOT NULL DEFAULT 'operator',
    "approver_user_ids" TEXT[],
    "state" TEXT NOT NULL DEFAULT 'pending',
    "live_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),
    "decided_by" TEXT,
    "note" TEXT,
    "voided_at" TIMESTAMPTZ(3),
    "void_cause" TEXT,
    "used_at" TIMESTAMPTZ(3),
    "operation_row_id" TEXT,
    "announced_at" TIMESTAMPTZ(3),
    CONSTRAINT "approvals_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "approvals_team_id_live_key_key" ON "approvals"("team_id", "live_key");
CREATE INDEX "approvals_team_id_state_created_at_idx" ON "approvals"("team_id", "state", "created_at");
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "budget_usage" (
    "team_id" TEXT NOT NULL,
    "budget" TEXT NOT NULL,
    "scope_key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "unit" TEXT NOT NULL,
    "used" DECIMAL(65,30) NOT NULL DEFAULT 0,
    CONSTRAINT "budget_usage_pkey" PRIMARY KEY ("team_id", "budget", "scope_key", "window_start")
);

CREATE TABLE "budget_reservations" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "budget" TEXT NOT NULL,
    "scope_key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "unit" TEXT NOT NULL,
    "operation_row_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "amount" DECIMAL(65,30) NOT NULL,
    "actual" DECIMAL(65,30),
    "state" TEXT NOT NULL DEFAULT 'held',
    "release_cause" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),
    CONSTRAINT "budget_reservations_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "budget_reservations_operation_row_id_idx" ON "budget_reservations"("operation_row_id");
CREATE INDEX "budget_reservations_run_id_idx" ON "budget_reservations"("run_id");

CREATE TABLE "budget_crossings" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "budget" TEXT NOT NULL,
    "scope_key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "run_id" TEXT NOT NULL,
    "root_run_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "crossed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "budget_crossings_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "budget_crossings_team_id_budget_scope_key_window_start_key" ON "budget_crossings"("team_id", "budget", "scope_key", "window_start");

DROP FUNCTION quiesce_gate(text, text, text, text, integer, text, text, text, integer, integer);
DROP FUNCTION quiesce_gate_batch(text[], text[], text[], integer[], text[], text[], text[], integer, integer);

CREATE OR REPLACE FUNCTION quiesce_redact(p_value jsonb, p_keys text[]) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
    -- The arguments an approver sees: every value under a listed key (at any depth) replaced by a marker.
    IF p_value IS NULL OR p_keys IS NULL OR cardinality(p_keys) = 0 THEN RETURN p_value; END IF;
    IF jsonb_typeof(p_value) = 'object' THEN
        RETURN coalesce((SELECT jsonb_object_agg(e.key, CASE WHEN e.key = ANY (p_keys) THEN '"[redacted]"'::jsonb
                                                              ELSE quiesce_redact(e.value, p_keys) END)
                           FROM jsonb_each(p_value) e), '{}'::jsonb);
    ELSIF jsonb_typeof(p_value) = 'array' THEN
        RETURN coalesce((SELECT jsonb_agg(quiesce_redact(e.value, p_keys) ORDER BY e.ord)
                           FROM jsonb_array_elements(p_value) WITH ORDINALITY e(value, ord)), '[]'::jsonb);
    END IF;
    RETURN p_value;
END;
$fn$;

CREATE OR REPLACE FUNCTION quiesce_gate_policy(
    p_team text, p_version integer, p_run text, p_root text, p_path text[], p_lease text, p_lease_path text[],
    p_epoch integer, p_operation_id text, p_tool text, p_args_digest text, p_args jsonb, p_cost jsonb, p_now timestamptz
) RETURNS jsonb                -- {decision, reason, approvalId?, reserve: [...]}; the same steps as lib/control/policy.ts decidePolicy
LANGUAGE plpgsql
VOLATILE
AS $fn$
DECLARE
    r_run record; r_rule record; r_ap record; r_b record;
    v_access record;
    v_key text; v_id text; v_used numeric; v_amount numeric; v_scope text; v_window timestamptz;
    v_reserve jsonb := '[]'::jsonb; v_exhausted text; v_hold boolean := false; v_approval text;
    v_crossed integer;
BEGIN
    SELECT r.harness::text AS harness, r.native_agent_id, r.created_by INTO r_run FROM runs r WHERE r.id = p_run;

    -- The first matching allow / deny / require_approval rule decides access; every matching budget applies.
    SELECT pr.* INTO v_access FROM policy_rules pr
     WHERE pr.team_id = p_team AND pr.version = p_version AND pr.effect <> 'budget'
       AND (pr.tool_regex IS NULL OR p_tool ~ pr.tool_regex)
       AND (pr.harness IS NULL OR pr.harness::text = r_run.harness)
       AND (pr.agent IS NULL OR pr.agent = r_run.native_agent_id OR pr.agent = r_run.created_by)
       AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (p_path))
     ORDER BY pr.position LIMIT 1;
    IF FOUND AND v_access.effect = 'deny' THEN
        RETURN jsonb_build_object('decision', 'deny', 'reason', 'policy_denied', 'rule', v_access.name);
    END IF;

    IF FOUND AND v_access.effect = 'require_approval' THEN
        -- Bound to the run, the lease, the epoch, the operation and the arguments: any other call needs its own.
        v_key := md5(concat_ws('|', p_run, p_lease, p_epoch::text, p_operation_id, coalesce(p_args_digest, '-')));
        SELECT a.* INTO r_ap FROM approvals a WHERE a.team_id = p_team AND a.live_key = v_key;
        IF NOT FOUND THEN
            v_id := 'apr_' || replace(gen_random_uuid()::text, '-', '');
            INSERT INTO approvals (id, team_id, run_id, root_run_id, run_path, lease_id, lease_path, epoch, operation_id, tool,
                                   args_digest, arguments, policy_version, rule_name, approver_role, approver_user_ids,
                                   state, live_key, created_at, expires_at)
            SELECT v_id, p_team, p_run, p_root, p_path, p_lease, p_lease_path, p_epoch, p_operation_id, p_tool,
                   p_args_digest, quiesce_redact(p_args, pv.redact_keys), p_version, v_access.name,
                   coalesce(v_access.approver_role, 'operator'), v_access.approver_user_ids,
                   'pending', v_key, p_now, p_now + make_interval(secs => coalesce(v_access.approval_ttl_seconds, 900))
              FROM policy_versions pv WHERE pv.team_id = p_team AND pv.version = p_version
            ON CONFLICT (team_id, live_key) DO NOTHING;
            IF NOT FOUND THEN   -- a concurrent ask of the same call created it
                SELECT a.id INTO v_id FROM approvals a WHERE a.team_id = p_team AND a.live_key = v_key;
            ELSE
                PERFORM pg_notify('quiesce_approvals', jsonb_build_object('teamId', p_team, 'approvalId', v_id)::text);
            END IF;
            RETURN jsonb_build_object('decision', 'hold', 'reason', 'awaiting_approval', 'approvalId', v_id);
        END IF;
        IF r_ap.state IN ('pending', 'approved') AND r_ap.expires_at <= p_now THEN
            UPDATE approvals SET state = 'expired', decided_at = coalesce(decided_at, r_ap.expires_at)
             WHERE id = r_ap.id AND state IN ('pending', 'approved');
            RETURN jsonb_build_object('decision', 'deny', 'reason', 'approval_expired', 'approvalId', r_ap.id);
        ELSIF r_ap.state = 'pending' THEN
            RETURN jsonb_build_object('decision', 'hold', 'reason', 'awaiting_approval', 'approvalId', r_ap.id);
        ELSIF r_ap.state = 'denied' THEN
            RETURN jsonb_build_object('decision', 'deny', 'reason', 'approval_denied', 'approvalId', r_ap.id);
        ELSIF r_ap.state = 'expired' THEN
            RETURN jsonb_build_object('decision', 'deny', 'reason', 'approval_expired', 'approvalId', r_ap.id);
        END IF;
        v_approval := r_ap.id;   -- approved, in time: admitted (marked used once the operation is written)
    END IF;

    -- Budgets: each reservation is checked under the usage row's lock, taken in one order (budget, scope),
    -- so concurrent callers can never together cross a limit.
    FOR r_b IN SELECT pr.*,
                      CASE pr.budget_per WHEN 'run_tree' THEN p_root
                                         WHEN 'agent' THEN coalesce(r_run.native_agent_id, r_run.created_by, '-')
                                         ELSE '-' END AS scope_key,
                      CASE pr.budget_window WHEN 'minute' THEN date_trunc('minute', p_now)
                                            ELSE 'epoch'::timestamptz END AS window_start
                 FROM policy_rules pr
                WHERE pr.team_id = p_team AND pr.version = p_version AND pr.effect = 'budget'
                  AND (pr.tool_regex IS NULL OR p_tool ~ pr.tool_regex)
                  AND (pr.harness IS NULL OR pr.harness::text = r_run.harness)
                  AND (pr.agent IS NULL OR pr.agent = r_run.native_agent_id OR pr.agent = r_run.created_by)
                  AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (p_path))
                ORDER BY pr.name LOOP
        v_amount := CASE WHEN r_b.budget_unit = 'calls' THEN coalesce((p_cost ->> 'calls')::numeric, 1)
                         ELSE coalesce((p_cost ->> r_b.budget_unit)::numeric, 0) END;
        INSERT INTO budget_usage (team_id, budget, scope_key, window_start, unit, used)
        VALUES (p_team, r_b.name, r_b.scope_key, r_b.window_start, r_b.budget_unit, 0)
        ON CONFLICT (team_id, budget, scope_key, window_start) DO NOTHING;
        SELECT u.used INTO v_used FROM budget_usage u
         WHERE u.team_id = p_team AND u.budget = r_b.name AND u.scope_key = r_b.scope_key AND u.window_start = r_b.window_start
           FOR UPDATE;
        IF v_used + v_amount > r_b.budget_limit OR (v_amount = 0 AND v_used >= r_b.budget_limit) THEN
            v_exhausted := coalesce(v_exhausted, r_b.name);
            v_hold := v_hold OR r_b.budget_when_exhausted = 'hold';
            -- Crossing a budget acts once per window, by policy: trip the tree's breaker or pause it (never a kill).
            IF r_b.budget_on_cross IN ('trip_breaker', 'pause') THEN
                INSERT INTO budget_crossings (id, team_id, budget, scope_key, window_start, run_id, root_run_id, action, crossed_at)
                VALUES ('bx_' || replace(gen_random_uuid()::text, '-', ''), p_team, r_b.name, r_b.scope_key, r_b.window_start,
                        p_run, p_root, r_b.budget_on_cross, p_now)
                ON CONFLICT (team_id, budget, scope_key, window_start) DO NOTHING;
                GET DIAGNOSTICS v_crossed = ROW_COUNT;
                IF v_crossed = 1 AND r_b.budget_on_cross = 'trip_breaker' THEN
                    UPDATE runs SET breaker = 'open', breaker_held = true, breaker_changed_at = p_now,
                                    breaker_changed_by = 'system:budget', breaker_reason = 'budget ' || r_b.name || ' exhausted',
                                    breaker_probe_op_id = NULL
                     WHERE id = p_root AND NOT (breaker = 'open' AND breaker_held);
                    IF FOUND THEN
                        PERFORM quiesce_append_audit(p_team, 'system:budget', 'breaker.trip', p_root, NULL,
                                                     jsonb_build_object('breaker', 'open', 'held', true, 'budget', r_b.name,
                                                                        'reason', 'budget ' || r_b.name || ' exhausted'));
                        PERFORM pg_notify('quiesce_control', jsonb_build_object('kind', 'breaker', 'teamId', p_team,
                                          'rootRunId', p_root, 'runIds', jsonb_build_array(p_root))::text);
                    END IF;
                ELSIF v_crossed = 1 THEN
                    UPDATE runs SET lifecycle = 'paused', lifecycle_changed_at = p_now, lifecycle_changed_by = 'system:budget',
                                    lifecycle_reason = 'budget ' || r_b.name || ' exhausted'
                     WHERE id = p_root AND lifecycle = 'normal';
                    IF FOUND THEN
                        PERFORM quiesce_append_audit(p_team, 'system:budget', 'run.pause', p_root,
                                                     jsonb_build_object('lifecycle', 'normal'),
                                                     jsonb_build_object('lifecycle', 'paused', 'budget', r_b.name,
                                                                        'reason', 'budget ' || r_b.name || ' exhausted'));
                        PERFORM pg_notify('quiesce_control', jsonb_build_object('kind', 'pause', 'teamId', p_team,
                                          'rootRunId', p_root, 'runIds', jsonb_build_array(p_root))::text);
                    END IF;
                END IF;
            END IF;
        ELSE
            v_reserve := v_reserve || jsonb_build_object('budget', r_b.name, 'scopeKey', r_b.scope_key,
                                                         'windowStart', r_b.window_start, 'unit', r_b.budget_unit, 'amount', v_amount);
        END IF;
    END LOOP;
    IF v_exhausted IS NOT NULL THEN
        RETURN jsonb_build_object('decision', CASE WHEN v_hold THEN 'hold' ELSE 'deny' END, 'reason', 'budget_exhausted',
                                  'budget', v_exhausted);
    END IF;
    RETURN jsonb_build_object('decision', 'allow', 'reason', 'allowed', 'approvalId', v_approval, 'reserve', v_reserve);
END;
$fn$;

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

CREATE OR REPLACE FUNCTION quiesce_release_reservations() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_op text; v_cause text;
BEGIN
    -- Work that never started gives its reservation back, and so does a running call a stop settled as
    -- cancelled without effect (the provider's word); work with an unknown outcome keeps it (the spend may
    -- have happened); finished work keeps its estimate until the holder reports the actual cost.
    IF TG_TABLE_NAME = 'settlements' THEN
        IF NEW.settled_state IS DISTINCT FROM 'cancelled_without_effect'
           OR (TG_OP = 'UPDATE' AND OLD.settled_state IS NOT DISTINCT FROM NEW.settled_state) THEN
            RETURN NULL;
        END IF;
        v_op := NEW.operation_id; v_cause := 'cancelled_without_effect';
    ELSE
        IF NOT (NEW.state IN ('cancelled_not_started', 'denied') AND OLD.state IS DISTINCT FROM NEW.state) THEN
            RETURN NULL;
        END IF;
        v_op := NEW.id; v_cause := NEW.state::text;
    END IF;
    WITH rel AS (
        UPDATE budget_reservations b SET state = 'released', settled_at = clock_timestamp(), release_cause = v_cause
         WHERE b.operation_row_id = v_op AND b.state = 'held'
        RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.amount)
    UPDATE budget_usage u SET used = greatest(u.used - s.amount, 0)
      FROM (SELECT team_id, budget, scope_key, window_start, sum(amount) AS amount FROM rel
             GROUP BY team_id, budget, scope_key, window_start) s
     WHERE u.team_id = s.team_id AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start;
    RETURN NULL;
END;
$fn$;

CREATE OR REPLACE FUNCTION quiesce_settle_reservations(p_op_row text, p_cost jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_n integer;
BEGIN
    -- The holder's actual cost replaces each estimate it reported for; a unit it did not report keeps its estimate.
    WITH s AS (
        UPDATE budget_reservations b
           SET actual = CASE WHEN b.unit = 'calls' THEN coalesce((p_cost ->> 'calls')::numeric, b.amount)
                             ELSE (p_cost ->> b.unit)::numeric END,
               state = 'settled', settled_at = clock_timestamp()
         WHERE b.operation_row_id = p_op_row AND b.state = 'held' AND (b.unit = 'calls' OR p_cost ? b.unit)
        RETURNING b.team_id, b.budget, b.scope_key, b.window_start, b.actual - b.amount AS delta)
    UPDATE budget_usage u SET used = greatest(u.used + d.delta, 0)
      FROM (SELECT team_id, budget, scope_key, window_start, sum(delta) AS delta FROM s
             GROUP BY team_id, budget, scope_key, window_start) d
     WHERE u.team_id = d.team_id AND u.budget = d.budget AND u.scope_key = d.scope_key AND u.window_start = d.window_start;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END;
$fn$;

CREATE OR REPLACE FUNCTION quiesce_void_approvals() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    -- A pause, kill, epoch change, lease revocation or fleet stop voids every open approval below it at once:
    -- nobody is asked about an agent that no longer runs, and a yes given later admits nothing.
    IF TG_TABLE_NAME = 'runs' THEN
        IF NOT ((NEW.lifecycle IN ('paused', 'killed') AND OLD.lifecycle IS DISTINCT FROM NEW.lifecycle)
                OR NEW.epoch > OLD.epoch) THEN
            RETURN NULL;
        END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(),
                               void_cause = CASE WHEN NEW.lifecycle = 'killed' THEN 'killed'
                                                 WHEN NEW.lifecycle = 'paused' AND OLD.lifecycle IS DISTINCT FROM NEW.lifecycle THEN 'paused'
                                                 ELSE 'epoch_changed' END
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND NEW.id = ANY (a.run_path);
    ELSIF TG_TABLE_NAME = 'leases' THEN
        IF NEW.revoked_at IS NULL OR OLD.revoked_at IS NOT NULL THEN RETURN NULL; END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(), void_cause = 'lease_revoked'
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND NEW.id = ANY (a.lease_path);
    ELSE -- stop_scopes: a fleet pause or kill
        IF NEW.lifted_at IS NOT NULL THEN RETURN NULL; END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(),
                               void_cause = CASE WHEN NEW.action = 'kill' THEN 'fleet_kill' ELSE 'fleet_pause' END
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY (a.run_path) AND r.team_id = NEW.team_id
                                             AND quiesce_scope_matches(NEW, r));
    END IF;
    RETURN NULL;
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
    v_policy integer; v_pol jsonb;
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
               o.registered_by_key,
               CASE WHEN p_source = 'gate' THEN p_run_id ELSE o.run_id END,
               CASE WHEN p_source = 'gate' THEN p_lease_id ELSE o.lease_id END,
               CASE WHEN p_source = 'gate' THEN p_epoch ELSE o.epoch_stamp END,
               r.root_run_id, r.path
          INTO v_team, v_kind, v_scopes, v_role, v_key_id, o_found, o_regkey, v_run, v_lease, v_epoch, v_root, v_path
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
           coalesce(sc.s_kill, false), coalesce(sc.s_pause, false), tm.policy_version
      INTO c_n, c_max, c_killed_self, c_killed_anc, c_finished, c_paused, c_stale, c_blocked, c_claims,
           l_len, l_n, l_last, l_run, l_anc_revoked, l_own_revoked, l_expired, l_path, l_renew,
           o_found, o_id, o_run, o_state, o_reason, o_expires, o_outcome, o_tool,
           s_kill, s_pause, v_policy
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
      -- the policy version current at decision time (enabling one takes the team's scope key exclusively)
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
        -- a deny rule, an approval bound to this call, the budgets' reservations.
        v_pol := NULL;
        IF v_effect IN ('insert_running', 'start') AND v_policy IS NOT NULL THEN
            v_pol := quiesce_gate_policy(v_team, v_policy, v_run, v_root, v_path, v_lease, l_path, v_epoch, p_operation_id,
                                         coalesce(p_tool, o_tool, ''), p_args_digest, p_args, p_cost, v_now);
            IF v_pol ->> 'decision' <> 'allow' THEN
                v_decision := (v_pol ->> 'decision')::"Decision"; v_reason := v_pol ->> 'reason';
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

    IF v_pol IS NOT NULL AND v_decision = 'allow' THEN
        PERFORM quiesce_gate_policy_apply(v_team, CASE WHEN v_effect = 'start' THEN o_id ELSE p_new_op_id END, p_operation_id,
                                          v_run, v_pol, v_now);
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
        'approvalId', v_pol ->> 'approvalId', 'budget', v_pol ->> 'budget',
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
    -- the team policy's part decided here (calls by index; budget pairs one per call and matching budget)
    v_denied integer[] := '{}'; v_complex integer[] := '{}';
    b_i integer[]; b_team text[]; b_name text[]; b_scope text[]; b_window timestamptz[]; b_unit text[]; b_amount numeric[];
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

    -- Statement 1b, only for a batch with calls of a team with an enabled policy: each call's first matching
    -- access rule and matching budgets (the same match as quiesce_gate_policy). A deny rule is decided here; so
    -- is a call whose budgets ALL fit with every call of this batch counted (then any order of the calls would
    -- have admitted it). Anything else — an approval, a budget that might not fit — goes to quiesce_gate below.
    -- The budgets' usage rows are made and locked here, in one order, before the facts are read.
    IF EXISTS (SELECT 1 FROM teams tm WHERE tm.id = ANY (v_team) AND tm.policy_version IS NOT NULL) THEN
        WITH pc AS MATERIALIZED (
            SELECT x.i::integer AS i, x.team, tm.policy_version AS version, coalesce(p_tool[x.i], '') AS tool,
                   r.harness::text AS harness, r.native_agent_id, r.created_by, r.path, r.root_run_id
              FROM unnest(v_team) WITH ORDINALITY AS x(team, i)
              JOIN teams tm ON tm.id = x.team AND tm.policy_version IS NOT NULL
              JOIN runs r ON r.id = p_run_id[x.i] AND r.team_id = x.team
        ), acc AS (
            SELECT pc.i, (SELECT pr.effect FROM policy_rules pr
                           WHERE pr.team_id = pc.team AND pr.version = pc.version AND pr.effect <> 'budget'
                             AND (pr.tool_regex IS NULL OR pc.tool ~ pr.tool_regex)
                             AND (pr.harness IS NULL OR pr.harness::text = pc.harness)
                             AND (pr.agent IS NULL OR pr.agent = pc.native_agent_id OR pr.agent = pc.created_by)
                             AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (pc.path))
                           ORDER BY pr.position LIMIT 1) AS effect
              FROM pc
        )
        SELECT coalesce(array_agg(acc.i) FILTER (WHERE acc.effect = 'deny'), '{}'),
               coalesce(array_agg(acc.i) FILTER (WHERE acc.effect = 'require_approval'), '{}')
          INTO v_denied, v_complex FROM acc;
        SELECT array_agg(b.i ORDER BY b.i, b.name), array_agg(b.team ORDER BY b.i, b.name), array_agg(b.name ORDER BY b.i, b.name),
               array_agg(b.scope ORDER BY b.i, b.name), array_agg(b.win ORDER BY b.i, b.name), array_agg(b.unit ORDER BY b.i, b.name),
               array_agg(b.amount ORDER BY b.i, b.name)
          INTO b_i, b_team, b_name, b_scope, b_window, b_unit, b_amount
          FROM (SELECT x.i::integer AS i, x.team, pr.name, pr.budget_unit AS unit,
                       CASE pr.budget_per WHEN 'run_tree' THEN r.root_run_id
                                          WHEN 'agent' THEN coalesce(r.native_agent_id, r.created_by, '-') ELSE '-' END AS scope,
                       CASE pr.budget_window WHEN 'minute' THEN date_trunc('minute', v_now) ELSE 'epoch'::timestamptz END AS win,
                       CASE WHEN pr.budget_unit = 'calls' THEN coalesce((p_extra -> (x.i::integer - 1) -> 'cost' ->> 'calls')::numeric, 1)
                            ELSE coalesce((p_extra -> (x.i::integer - 1) -> 'cost' ->> pr.budget_unit)::numeric, 0) END AS amount
                  FROM unnest(v_team) WITH ORDINALITY AS x(team, i)
                  JOIN teams tm ON tm.id = x.team AND tm.policy_version IS NOT NULL
                  JOIN runs r ON r.id = p_run_id[x.i] AND r.team_id = x.team
                  JOIN policy_rules pr ON pr.team_id = x.team AND pr.version = tm.policy_version AND pr.effect = 'budget'
                       AND (pr.tool_regex IS NULL OR coalesce(p_tool[x.i], '') ~ pr.tool_regex)
                       AND (pr.harness IS NULL OR pr.harness::text = r.harness::text)
                       AND (pr.agent IS NULL OR pr.agent = r.native_agent_id OR pr.agent = r.created_by)
                       AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (r.path))) b;
        IF b_i IS NOT NULL THEN
            INSERT INTO budget_usage (team_id, budget, scope_key, window_start, unit, used)
            SELECT DISTINCT u.team, u.name, u.scope, u.win, u.unit, 0
              FROM unnest(b_team, b_name, b_scope, b_window, b_unit) AS u(team, name, scope, win, unit)
             ORDER BY 1, 2, 3, 4
            ON CONFLICT (team_id, budget, scope_key, window_start) DO NOTHING;
            -- Lock each row (in one order), then: a call is decided here only if every row it reserves against
            -- fits the whole batch's reservations (and has something left when a call reserves nothing).
            WITH locked AS MATERIALIZED (
                SELECT u.team_id, u.budget, u.scope_key, u.window_start, u.used
                  FROM budget_usage u
                 WHERE (u.team_id, u.budget, u.scope_key, u.window_start) IN
                       (SELECT bk.t, bk.n, bk.s, bk.w FROM unnest(b_team, b_name, b_scope, b_window) AS bk(t, n, s, w))
                 ORDER BY 1, 2, 3, 4
                   FOR UPDATE
            ), pairs AS (
                SELECT * FROM unnest(b_i, b_team, b_name, b_scope, b_window, b_amount) AS p(i, team, name, scope, win, amount)
            ), rowsum AS (
                SELECT l.team_id, l.budget, l.scope_key, l.window_start,
                       l.used + sum(p.amount) <= min(pr.budget_limit)
                       AND NOT (bool_or(p.amount = 0) AND l.used + sum(p.amount) >= min(pr.budget_limit)) AS fits
                  FROM locked l
                  JOIN pairs p ON p.team = l.team_id AND p.name = l.budget AND p.scope = l.scope_key AND p.win = l.window_start
                  JOIN teams tm ON tm.id = l.team_id
                  JOIN policy_rules pr ON pr.team_id = l.team_id AND pr.version = tm.policy_version AND pr.name = l.budget
                 GROUP BY l.team_id, l.budget, l.scope_key, l.window_start, l.used
            )
            SELECT v_complex || coalesce(array_agg(DISTINCT p.i), '{}') INTO v_complex
              FROM pairs p JOIN rowsum rs ON rs.team_id = p.team AND rs.budget = p.name AND rs.scope_key = p.scope
                                         AND rs.window_start = p.win
             WHERE NOT rs.fits;
        END IF;
    END IF;

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
                   WHEN f.i = ANY (v_denied) THEN 'policy_denied'
                   ELSE 'allowed'
               END AS reason
          FROM f
    ), d AS MATERIALIZED (
        SELECT a.*,
               CASE a.reason WHEN 'allowed' THEN 'allow' WHEN 'paused' THEN 'hold' ELSE 'deny' END::"Decision" AS decision
          FROM a
         -- decided here: a new operationId, once in this batch, readable state, and for an allow nothing
         -- more to do than insert it (no probe to claim, no renewal due, no approval, every budget fits)
         WHERE NOT a.o_found AND a.dup = 1 AND a.reason <> 'missing_state'
           AND NOT (a.reason = 'allowed' AND (coalesce(a.claims, false) OR coalesce(a.l_renew, false) OR a.i = ANY (v_complex)))
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
    ), res AS (
        -- the reservations of the calls admitted here (each budget fits the whole batch: checked above)
        INSERT INTO budget_reservations (id, team_id, budget, scope_key, window_start, unit, operation_row_id, operation_id,
                                         run_id, amount, state, created_at)
        SELECT 'brs_' || replace(gen_random_uuid()::text, '-', ''), done.team, b.name, b.scope, b.win, b.unit, done.new_id,
               done.op_id, done.run_id, b.amount, 'held', v_now
          FROM done JOIN unnest(b_i, b_name, b_scope, b_window, b_unit, b_amount) AS b(i, name, scope, win, unit, amount) ON b.i = done.i
         WHERE done.decision = 'allow'
        RETURNING team_id, budget, scope_key, window_start, amount
    ), spent AS (
        UPDATE budget_usage u SET used = u.used + s.amount
          FROM (SELECT res.team_id, res.budget, res.scope_key, res.window_start, sum(res.amount) AS amount FROM res
                 GROUP BY res.team_id, res.budget, res.scope_key, res.window_start) s
         WHERE u.team_id = s.team_id AND u.budget = s.budget AND u.scope_key = s.scope_key AND u.window_start = s.window_start
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
                                     p_tool[k], p_new_op_id[k], p_cooldown_ms, p_probe_timeout_ms,
                                     p_extra -> (k - 1) ->> 'digest', p_extra -> (k - 1) -> 'args', p_extra -> (k - 1) -> 'cost');
        END IF;
    END LOOP;
    RETURN v_out;
END;
$fn$;

CREATE TRIGGER "runs_void_approvals" AFTER UPDATE OF "lifecycle", "epoch" ON "runs"
    FOR EACH ROW EXECUTE FUNCTION quiesce_void_approvals();
CREATE TRIGGER "leases_void_approvals" AFTER UPDATE OF "revoked_at" ON "leases"
    FOR EACH ROW EXECUTE FUNCTION quiesce_void_approvals();
CREATE TRIGGER "stop_scopes_void_approvals" AFTER INSERT ON "stop_scopes"
    FOR EACH ROW EXECUTE FUNCTION quiesce_void_approvals();
CREATE TRIGGER "operations_release_reservations" AFTER UPDATE OF "state" ON "operations"
    FOR EACH ROW EXECUTE FUNCTION quiesce_release_reservations();
CREATE TRIGGER "settlements_release_reservations" AFTER INSERT OR UPDATE OF "settled_state" ON "settlements"
    FOR EACH ROW EXECUTE FUNCTION quiesce_release_reservations();
