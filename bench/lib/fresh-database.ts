// Every bench run measures on a database of its own, on the server the app uses: DATABASE_URL's, or
// the embedded PostgreSQL `npm start` runs when it is unset. Dropped afterwards.
import { freshDatabase as create, type FreshDatabase } from "../../lib/platform/db/fresh-database";
import { EMBEDDED_DIR, EMBEDDED_PORT } from "../../lib/platform/db/embedded";

export type { FreshDatabase };

export function freshDatabase(log: (l: string) => void): Promise<FreshDatabase> {
  return create({ prefix: "quiesce_bench", databaseUrlOnly: true, embedded: { dataDir: EMBEDDED_DIR, port: EMBEDDED_PORT }, log });
}
