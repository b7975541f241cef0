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
