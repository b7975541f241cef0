-- The batch gate's statements keep one generic plan per connection (docs/design/gate-plans.md): plpgsql
-- re-planned statement 1 on every small batch. quiesce_gate already kept its generic plans and is left as
-- it is. ALTER FUNCTION adds the setting beside enable_seqscan = off; a later CREATE OR REPLACE of this
-- function must repeat both SET clauses.
ALTER FUNCTION quiesce_gate_batch(text[], text[], text[], integer[], text[], text[], text[], integer, integer)
    SET plan_cache_mode = force_generic_plan;
