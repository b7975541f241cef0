-- The environment of a run started under a supervisor (`quiesce exec`): the row is the `supervised` marker
-- (written by the run's holder before its command starts), the supervisor's latest live report, its
-- evidence after a stop, and the owner of an environment nobody could verify empty
-- (docs/design/environment-evidence.md).
CREATE TABLE "run_environments" (
    "run_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "mechanism" TEXT NOT NULL,
    "weakest" BOOLEAN NOT NULL,
    "grace_ms" INTEGER NOT NULL,
    "supervised_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "supervised_by" TEXT NOT NULL,
    "container" TEXT,
    "live_processes" INTEGER,
    "frozen" BOOLEAN NOT NULL DEFAULT false,
    "status_at" TIMESTAMPTZ(3),
    "evidence" JSONB,
    "evidence_at" TIMESTAMPTZ(3),
    "evidence_by" TEXT,
    "unknown_since" TIMESTAMPTZ(3),
    "unknown_cause" TEXT,
    "owner_user_id" TEXT,
    "owner_chosen_by" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by" TEXT,
    "resolution_evidence" TEXT,
    CONSTRAINT "run_environments_pkey" PRIMARY KEY ("run_id")
);
CREATE INDEX "run_environments_team_id_unknown_since_idx" ON "run_environments"("team_id", "unknown_since");
ALTER TABLE "run_environments" ADD CONSTRAINT "run_environments_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "run_environments" ADD CONSTRAINT "run_environments_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "run_environments" ADD CONSTRAINT "run_environments_owner_user_id_fkey" FOREIGN KEY ("owner_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
