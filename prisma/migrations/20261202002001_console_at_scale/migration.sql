-- Console at scale (docs/console.md#runs-list): keyset paging of the runs list, roots-only view, the run
-- timeline's control events, and saved views per user.

-- Keyset paging walks (team_id, created_at, id) in either direction: the id breaks ties, so a page
-- boundary is exact. Replaces the (team_id, created_at) index it extends.
DROP INDEX IF EXISTS "runs_team_id_created_at_idx";
CREATE INDEX "runs_team_id_created_at_id_idx" ON "runs"("team_id", "created_at", "id");
-- The roots-only view (parent_run_id IS NULL) and a root's children, newest first, without a sort.
CREATE INDEX "runs_team_id_parent_run_id_created_at_id_idx" ON "runs"("team_id", "parent_run_id", "created_at", "id");
-- Each filter of the list reads an index: lifecycle and status (paused and killed runs are a few per
-- cent of a team), harness (a quarter of the runs: without it the page and count walk the whole list), completion, the agent (its native agent id or creator label), the task sort.
CREATE INDEX "runs_team_id_lifecycle_created_at_id_idx" ON "runs"("team_id", "lifecycle", "created_at", "id");
CREATE INDEX "runs_team_id_harness_created_at_id_idx" ON "runs"("team_id", "harness", "created_at", "id");
CREATE INDEX "runs_team_id_finished_at_idx" ON "runs"("team_id", "finished_at");
CREATE INDEX "runs_team_id_native_agent_id_idx" ON "runs"("team_id", "native_agent_id");
CREATE INDEX "runs_team_id_created_by_idx" ON "runs"("team_id", "created_by");
CREATE INDEX "runs_team_id_task_id_id_idx" ON "runs"("team_id", "task_id", "id");
-- Search by part of a task id or title (ILIKE '%…%') reads trigram indexes instead of every run.
-- pg_trgm ships with PostgreSQL and is a trusted extension (the database owner may create it).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "runs_task_id_trgm_idx" ON "runs" USING GIN ("task_id" gin_trgm_ops);
CREATE INDEX "runs_title_trgm_idx" ON "runs" USING GIN ("title" gin_trgm_ops);
-- The timeline reads a run's control events (audit rows whose target is the run) by id.
CREATE INDEX "audit_events_team_id_target_id_idx" ON "audit_events"("team_id", "target", "id");

-- A saved view: a named runs-list query of one member in one team.
CREATE TABLE "saved_views" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "saved_views_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "saved_views_team_id_user_id_name_key" ON "saved_views"("team_id", "user_id", "name");
ALTER TABLE "saved_views" ADD CONSTRAINT "saved_views_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "saved_views" ADD CONSTRAINT "saved_views_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
