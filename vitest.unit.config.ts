// `npm run test:unit`: the pure tests only (domain rules, parsers, config), no database, no processes,
// so a change to lib/control is checked in seconds. The full suite (vitest.config.ts) also runs these.
import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: {
    alias: {
      "@": path.resolve(import.meta.dirname),
      "server-only": path.resolve(import.meta.dirname, "node_modules/server-only/empty.js"),
    },
  },
  test: {
    include: [
      "lib/control/**/*.test.ts",
      "lib/config/**/*.test.ts",
      "lib/log/**/*.test.ts",
      "lib/adapters/**/*.test.ts",
      "lib/auth/**/*.test.ts",
      "lib/security/client-address.test.ts",
      "lib/start/plan.test.ts",
      "lib/start/secret.test.ts",
      "lib/wait.test.ts",
      "lib/ids.test.ts",
      "lib/integrations/keystore.test.ts",
      "lib/security/outbound.test.ts",
      "test/docs/**/*.test.ts",
      "test/lint/**/*.test.ts",
      "test/bench/**/*.test.ts",
    ],
    testTimeout: 30_000,
  },
});
