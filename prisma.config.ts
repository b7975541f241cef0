// Prisma CLI config (Prisma 7). Only `prisma generate` is used here: migrations are applied by
// `npm run migrate` (lib/platform/db/migrate.ts), because Prisma's schema engine is not available offline.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unused" },
});
