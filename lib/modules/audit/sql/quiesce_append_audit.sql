CREATE OR REPLACE FUNCTION quiesce_append_audit(
    p_team text, p_actor text, p_action text, p_target text, p_before jsonb, p_after jsonb
) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_prev text;
    v_at timestamptz := clock_timestamp()::timestamptz(3);   -- the column's precision, rounded as it rounds
    v_hash text;
    v_id bigint;
BEGIN
    -- The same key as lib/modules/audit/audit.ts appendAudit: both writers serialize on it.
    PERFORM pg_advisory_xact_lock(hashtextextended('audit:' || coalesce(p_team, '-'), 1));
    IF p_team IS NULL THEN
        SELECT a.hash INTO v_prev FROM audit_events a WHERE a.team_id IS NULL ORDER BY a.id DESC LIMIT 1;
    ELSE
        SELECT a.hash INTO v_prev FROM audit_events a WHERE a.team_id = p_team ORDER BY a.id DESC LIMIT 1;
    END IF;
    v_prev := coalesce(v_prev, repeat('0', 64));
    v_hash := encode(sha256(convert_to(quiesce_jcs(jsonb_build_array(
                  v_prev, p_team, p_actor, p_action, p_target, p_before, p_after,
                  to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))), 'UTF8')), 'hex');
    INSERT INTO audit_events (team_id, actor, action, target, before, after, at, prev_hash, hash)
    VALUES (p_team, p_actor, p_action, p_target, p_before, p_after, v_at, v_prev, v_hash)
    RETURNING id INTO v_id;
    RETURN v_id;
END;
$fn$;
