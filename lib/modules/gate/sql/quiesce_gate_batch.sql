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
