-- Why an outcome was unknown, kept when its reconciliation is resolved. Resolving re-settles the
-- operation ("reconciled by …: effect_absent"), which overwrote the settlement's reason and the
-- operation's state reason: the queue then showed a resolved row without the reason it was opened for.
-- Written at resolution (lib/dal/reconciliations.ts, lib/dal/settlements.ts); rows resolved before
-- this column existed keep NULL (the console says the reason was not kept).
ALTER TABLE "reconciliations" ADD COLUMN "unknown_reason" TEXT;
