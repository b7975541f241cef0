// Runs in every test worker: point the db layer at this run's database before any module uses it.
import { inject } from "vitest";

process.env.DATABASE_URL = inject("databaseUrl");

// Every test file shares one database, so bad-key counts from one file would throttle another's
// deliberate 401 checks; the throttle's own test lowers this for itself.
process.env.QUIESCE_BAD_KEY_FREE_FAILURES ??= "100000";

// Receipts are signed at issue time: this run's signing keys live in a temporary folder shared by its
// workers and the API server they start, never in the repository's .quiesce/.
process.env.QUIESCE_SIGNING_KEY_DIR ??= (await import("node:path")).join(
  (await import("node:os")).tmpdir(),
  `quiesce-test-signing-${new URL(inject("databaseUrl")).pathname.slice(1)}`,
);

// The webhook tests deliver to receivers on 127.0.0.1; production refuses every non-public address.
// test/security/webhook-ssrf.test.ts sets this per test to prove both.
process.env.QUIESCE_WEBHOOK_ALLOW_PRIVATE ??= "127.0.0.1/32";
