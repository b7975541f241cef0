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
