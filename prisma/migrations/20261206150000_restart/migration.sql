-- Restart on settled ground (docs/evidence.md#restart): a new root continues a killed one, at most once,
-- naming the digest of the old tree's final stop receipt.
ALTER TABLE "runs" ADD COLUMN "restarted_from_run_id" TEXT;
ALTER TABLE "runs" ADD COLUMN "restarted_from_digest" TEXT;
CREATE UNIQUE INDEX "runs_restarted_from_run_id_key" ON "runs"("restarted_from_run_id");
ALTER TABLE "runs" ADD CONSTRAINT "runs_restarted_from_run_id_fkey" FOREIGN KEY ("restarted_from_run_id") REFERENCES "runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
