import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: {
    alias: {
      "@": path.resolve(import.meta.dirname),
      // The marker package's own no-op entry (what Next.js resolves under the react-server condition).
      "server-only": path.resolve(import.meta.dirname, "node_modules/server-only/empty.js"),
    },
  },
  test: {
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-env.ts"],
    include: ["lib/**/*.test.ts", "test/**/*.test.ts", "app/**/*.test.ts", "bin/**/*.test.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
