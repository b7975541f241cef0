// Runs in every test worker: point the db layer at this run's database before any module uses it.
import { inject } from "vitest";

process.env.DATABASE_URL = inject("databaseUrl");
