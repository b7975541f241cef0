-- A fleet stop's targets by barrier: after each barrier's receipt the engine finds the fleet stops waiting
-- on it (lib/dal/stops.ts onBarrierReceipt). Without this, that lookup scanned every target of every
-- scope: at 10 000 targets, once per receipt.
CREATE INDEX "stop_scope_targets_barrier_id_idx" ON "stop_scope_targets"("barrier_id");
