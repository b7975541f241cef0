CREATE OR REPLACE FUNCTION quiesce_append_audits(p_team text, p_rows jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_prev text;
    v_at timestamptz;
    v_hash text;
    v_before jsonb;
    v_after jsonb;
    r jsonb;
    v_n integer := 0;
BEGIN
    IF p_rows IS NULL OR jsonb_array_length(p_rows) = 0 THEN
        RETURN 0;
    END IF;
    -- The same key as quiesce_append_audit: every writer of the chain serializes on it.
    PERFORM pg_advisory_xact_lock(hashtextextended('audit:' || coalesce(p_team, '-'), 1));
    IF p_team IS NULL THEN
        SELECT a.hash INTO v_prev FROM audit_events a WHERE a.team_id IS NULL ORDER BY a.id DESC LIMIT 1;
    ELSE
        SELECT a.hash INTO v_prev FROM audit_events a WHERE a.team_id = p_team ORDER BY a.id DESC LIMIT 1;
    END IF;
    v_prev := coalesce(v_prev, repeat('0', 64));
    FOR r IN SELECT x FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS a(x, i) ORDER BY a.i LOOP
        v_at := clock_timestamp()::timestamptz(3);
        v_before := nullif(r -> 'before', 'null'::jsonb);
        v_after := nullif(r -> 'after', 'null'::jsonb);
        v_hash := encode(sha256(convert_to(quiesce_jcs(jsonb_build_array(
                      v_prev, p_team, r ->> 'actor', r ->> 'action', r ->> 'target', v_before, v_after,
                      to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))), 'UTF8')), 'hex');
        INSERT INTO audit_events (team_id, actor, action, target, before, after, at, prev_hash, hash)
        VALUES (p_team, r ->> 'actor', r ->> 'action', r ->> 'target', v_before, v_after, v_at, v_prev, v_hash);
        v_prev := v_hash;
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END;
$fn$;
