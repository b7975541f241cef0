CREATE OR REPLACE FUNCTION quiesce_open_recovery() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_team text; v_run text; v_provider text; v_label text; v_owner text; v_by text; v_due integer;
BEGIN
    -- Runs at commit (a deferred trigger), so the effect receipt written after the settlement is seen.
    IF NEW.settled_state IS DISTINCT FROM 'completed_and_verified' THEN RETURN NULL; END IF;
    SELECT o.team_id, o.run_id, o.provider_name INTO v_team, v_run, v_provider FROM operations o WHERE o.id = NEW.operation_id;
    SELECT nullif(e.rollback_owner, '') INTO v_label FROM effect_receipts e
     WHERE e.operation_id = NEW.operation_id AND nullif(e.rollback_owner, '') IS NOT NULL ORDER BY e.created_at DESC LIMIT 1;
    IF v_label IS NULL THEN
        SELECT nullif(p.rollback_owner, '') INTO v_label FROM providers p WHERE p.team_id = v_team AND p.name = v_provider;
    END IF;
    SELECT d.user_id, d.chosen_by INTO v_owner, v_by FROM quiesce_default_owner(v_team, v_run) d;
    SELECT t.recovery_due_seconds INTO v_due FROM teams t WHERE t.id = v_team;
    INSERT INTO recovery_items (id, team_id, operation_id, barrier_id, settlement_id, provider_name, rollback_owner,
                                assignee_user_id, assigned_by, assigned_at, state, due_at)
    VALUES ('rcv_' || replace(gen_random_uuid()::text, '-', ''), v_team, NEW.operation_id, NEW.barrier_id, NEW.id, v_provider, v_label,
            v_owner, CASE WHEN v_owner IS NULL THEN NULL ELSE v_by END, CASE WHEN v_owner IS NULL THEN NULL ELSE clock_timestamp() END,
            'open', clock_timestamp() + make_interval(secs => coalesce(v_due, 86400)))
    ON CONFLICT (operation_id) DO NOTHING;
    RETURN NULL;
END;
$fn$;
