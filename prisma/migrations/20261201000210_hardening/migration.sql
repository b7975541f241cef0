-- Hardening: sessions that can be ended, sign-in throttling kept in the database (so it holds across
-- replicas), and audit checkpoints kept apart from the audit chain.

-- Every console session carries the user's session version; bumping it ends them all on the next request.
ALTER TABLE "users" ADD COLUMN "session_version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "users" ADD COLUMN "disabled_at" TIMESTAMPTZ(3);

-- One row per throttled subject: "account:<email>", "address:<ip>" (sign-in) or "key-address:<ip>" (bad API keys).
CREATE TABLE "auth_throttles" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "last_failure_at" TIMESTAMPTZ(3),
    "blocked_until" TIMESTAMPTZ(3),
    CONSTRAINT "auth_throttles_pkey" PRIMARY KEY ("key")
);

-- The audit head (last id and hash, row count) of a team's chain at a moment, recorded by the verifier,
-- with each stop receipt and periodically. A truncated or re-chained log no longer reaches these heads.
CREATE TABLE "audit_checkpoints" (
    "id" BIGSERIAL NOT NULL,
    "team_id" TEXT,
    "last_event_id" BIGINT NOT NULL,
    "head_hash" TEXT NOT NULL,
    "event_count" INTEGER NOT NULL,
    "source" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "audit_checkpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_checkpoints_team_id_id_idx" ON "audit_checkpoints"("team_id", "id");
