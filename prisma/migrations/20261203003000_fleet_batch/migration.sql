-- Fleet stop in batches (docs/design/fleet-stop-batches.md): stop_scopes.coverage_at (the scope commits
-- on its own, its coverage is recorded after; a kill scope not yet covered is covered by the engine on its
-- next wake); quiesce_jcs prints every number as ECMAScript's Number::toString, so the SQL append is the
-- only append (lib/modules/audit/audit.test.ts); quiesce_append_audits appends a batch under one audit lock.

ALTER TABLE "stop_scopes" ADD COLUMN "coverage_at" TIMESTAMPTZ(3);
UPDATE "stop_scopes" SET "coverage_at" = "created_at";

CREATE OR REPLACE FUNCTION quiesce_js_number(v numeric) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $fn$
DECLARE
    s text := v::float8::text;   -- shortest digits that round-trip (extra_float_digits >= 1, the default)
    neg boolean := false;
    mant text;
    e int := 0;
    ip text;
    fp text;
    d text;
    n int;
    k int;
BEGIN
    IF s LIKE '-%' THEN neg := true; s := substr(s, 2); END IF;
    IF position('e' IN s) > 0 THEN
        mant := split_part(s, 'e', 1);
        e := split_part(s, 'e', 2)::int;
    ELSE
        mant := s;
    END IF;
    ip := split_part(mant, '.', 1);
    fp := split_part(mant, '.', 2);
    d := ip || fp;
    n := length(ip) + e;
    -- d × 10^(n − k) with no leading or trailing zeros in d (ECMAScript 6.1.6.1.20 Number::toString)
    WHILE length(d) > 0 AND left(d, 1) = '0' LOOP d := substr(d, 2); n := n - 1; END LOOP;
    d := rtrim(d, '0');
    IF d = '' THEN RETURN '0'; END IF;
    k := length(d);
    IF k <= n AND n <= 21 THEN
        s := d || repeat('0', n - k);
    ELSIF 0 < n AND n <= 21 THEN
        s := left(d, n) || '.' || substr(d, n + 1);
    ELSIF -6 < n AND n <= 0 THEN
        s := '0.' || repeat('0', -n) || d;
    ELSE
        s := left(d, 1) || CASE WHEN k > 1 THEN '.' || substr(d, 2) ELSE '' END
             || 'e' || CASE WHEN n - 1 >= 0 THEN '+' ELSE '-' END || abs(n - 1)::text;
    END IF;
    RETURN CASE WHEN neg THEN '-' || s ELSE s END;
END;
$fn$;

CREATE OR REPLACE FUNCTION quiesce_jcs(v jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $fn$
DECLARE
    t text := jsonb_typeof(v);
    n numeric;
    out text;
BEGIN
    IF t = 'object' THEN
        SELECT '{' || coalesce(string_agg(to_jsonb(e.k)::text || ':' || coalesce(quiesce_jcs(e.val), 'null'), ',' ORDER BY e.k COLLATE "C"), '') || '}'
          INTO out FROM jsonb_each(v) AS e(k, val);
        RETURN out;
    ELSIF t = 'array' THEN
        SELECT '[' || coalesce(string_agg(coalesce(quiesce_jcs(a.x), 'null'), ',' ORDER BY a.i), '') || ']'
          INTO out FROM jsonb_array_elements(v) WITH ORDINALITY AS a(x, i);
        RETURN out;
    ELSIF t = 'number' THEN
        n := v::text::numeric;
        IF n = trunc(n) AND abs(n) <= 9007199254740991 THEN
            RETURN trunc(n)::bigint::text;
        END IF;
        RETURN quiesce_js_number(n);
    END IF;
    -- strings (escaped as JSON.stringify escapes them), true, false, null
    RETURN v::text;
END;
$fn$;

-- p_rows: a JSON array of {actor, action, target, before?, after?}; returns how many rows were appended.
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
