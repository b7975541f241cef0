// Runs in every test worker: point the db layer at this run's database before any module uses it.
import { inject } from "vitest";

process.env.DATABASE_URL = inject("databaseUrl");

// Every test file shares one database, so bad-key counts from one file would throttle another's
// deliberate 401 checks; the throttle's own test lowers this for itself.
process.env.QUIESCE_BAD_KEY_FREE_FAILURES ??= "100000";
