-- Per-key and per-run quotas (lib/modules/gate/quotas.ts, docs/security/hardening.md#quotas): one fixed-window counter row
-- per subject ("runs:<key id>", "observed:<run id>"), shared by every replica and moved by one
-- conditional upsert, so a call past the limit changes nothing. Windows long gone are deleted by the
-- next call that finds them (index on window_start).
CREATE TABLE "quota_windows" (
    "subject" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "used" INTEGER NOT NULL,
    CONSTRAINT "quota_windows_pkey" PRIMARY KEY ("subject")
);

CREATE INDEX "quota_windows_window_start_idx" ON "quota_windows"("window_start");
