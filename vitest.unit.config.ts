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
      "lib/platform/config/**/*.test.ts",
      "lib/platform/log/**/*.test.ts",
      "lib/agent/adapters/**/*.test.ts",
      "lib/platform/auth/**/*.test.ts",
      "lib/platform/security/client-address.test.ts",
      "lib/start/plan.test.ts",
      "lib/start/secret.test.ts",
      "lib/platform/wait.test.ts",
      "lib/platform/ids.test.ts",
      "lib/platform/signing/keystore.test.ts",
      "lib/platform/security/outbound.test.ts",
      "test/docs/**/*.test.ts",
      "test/lint/**/*.test.ts",
      "test/bench/**/*.test.ts",
    ],
    testTimeout: 30_000,
  },
});
