-- The batch gate's statements keep one generic plan per connection (docs/gate.md#plans, issue 17).
--
-- Found with pg_stat_statements (track = all, track_planning) and a CPU profile of a backend deciding
-- batches: quiesce_gate_batch's statement 1 (authenticate every call and find its run) was planned
-- again on EVERY call when the batch was small — 1 001 plans for 1 000 batches of one call, ≈ 0.27 ms of
-- planning each, 28 % of the backend's time. plpgsql's plan cache compares the generic plan's estimate
-- (an unnest of unknown arrays: 10 rows) with the custom plans' (the real arrays: 1–8 rows) and keeps
-- re-planning while the custom ones look cheaper; from about 12 calls per batch the generic plan won and
-- the cost vanished, which is why batches of 16 never showed it. The generic plan is the same per-call
-- index lookups (enable_seqscan = off, OFFSET 0: 20261204003300_gate_plans).
--
-- Measured with pgbench, one connection, batches through quiesce_gate_batch, same tables (truncated
-- before each run): 1 call 846 → 1 288 batches/s, 4 calls 661 → 927, 8 calls 560 → 749, 16 calls 539 → 555.
-- quiesce_gate (one call) already kept its generic plans: forcing them there changed nothing (1 462 vs
-- 1 454/s) and it is left as it is.
--
-- ALTER FUNCTION adds the setting beside enable_seqscan = off; a later CREATE OR REPLACE of this function
-- must repeat both SET clauses.
ALTER FUNCTION quiesce_gate_batch(text[], text[], text[], integer[], text[], text[], text[], integer, integer)
    SET plan_cache_mode = force_generic_plan;
