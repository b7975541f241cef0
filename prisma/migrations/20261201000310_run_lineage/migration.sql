-- Lineage: the run a resumed or forked session (Claude Code --resume/--fork-session, Codex thread/fork)
-- was registered from. Such a run is also that run's child in the run tree, so a kill of the source
-- reaches it; this column records why it is there.
ALTER TABLE "runs" ADD COLUMN "forked_from_run_id" TEXT;
ALTER TABLE "runs" ADD CONSTRAINT "runs_forked_from_run_id_fkey" FOREIGN KEY ("forked_from_run_id") REFERENCES "runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "runs_forked_from_run_id_idx" ON "runs"("forked_from_run_id");
