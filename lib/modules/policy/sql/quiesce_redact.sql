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
