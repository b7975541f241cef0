-- Settlements by operation. The kill's dispatch stop (lib/dal/kill.ts) inserts one settlement per running
-- operation "not already being settled by an earlier barrier" (NOT EXISTS … WHERE operation_id = x.id);
-- without this index that is a scan of every settlement ever written, per running operation: with
-- 20 000 historical settlements, 240 ms of a 250 ms statement for 50 running operations (EXPLAIN
-- ANALYZE), growing with history. The evidence reads and the uncertainty trigger look up by operation too.
CREATE INDEX "settlements_operation_id_idx" ON "settlements"("operation_id");
