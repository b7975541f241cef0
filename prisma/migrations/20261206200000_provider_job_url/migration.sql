-- A provider's job page (docs/console.md#open-work): a URL template the console fills with an operation's
-- job id, so whoever reconciles an unknown outcome opens the authoritative record in one click.
ALTER TABLE "providers" ADD COLUMN "job_url" TEXT;
