// ESLint (flat config): typescript-eslint and Next.js's rules, plus the house rules that are about
// code rather than imports. Import boundaries and cycles are checked by dependency-cruiser
// (.dependency-cruiser.cjs); both run in `npm run lint`. See CONTRIBUTING.md#the-rules.
import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

/** Every lib/modules file starts with `import "server-only"`, so no data-access code can reach a browser bundle. */
const requireServerOnly = {
  meta: { type: "problem", messages: { missing: 'lib/modules files import "server-only" first.' }, schema: [] },
  create(context) {
    return {
      Program(node) {
        const has = node.body.some((s) => s.type === "ImportDeclaration" && s.source.value === "server-only");
        if (!has) context.report({ node, messageId: "missing" });
      },
    };
  },
};

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([
    "lib/generated/**",
    ".next/**",
    "node_modules/**",
    ".quiesce/**",
    "test-results/**",
    "playwright-report/**",
    "next-env.d.ts",
    "bench/results/**",
    "out/**",
    "evals/reports/**",
  ]),
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "separate-type-imports", disallowTypeAnnotations: false }],
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-console": "off",
    },
  },
  {
    // Tests and tools may use `any` for raw JSON bodies and mock-free plumbing.
    files: ["test/**", "e2e/**", "evals/**", "bench/**", "scripts/**", "**/*.test.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["lib/modules/**/*.ts"],
    // Webhook receivers verify a delivery's signature with this file outside any server.
    ignores: ["**/*.test.ts", "lib/modules/webhooks/events.ts"],
    plugins: { quiesce: { rules: { "server-only": requireServerOnly } } },
    rules: { "quiesce/server-only": "error" },
  },
  {
    // The pure domain reads no clock: callers pass `now` in, so every rule is a function of its inputs.
    files: ["lib/control/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "lib/control reads no clock: take `now` as a parameter.",
        },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: "lib/control reads no clock: take `now` as a parameter.",
        },
        {
          selector: "CallExpression[callee.object.name='performance'][callee.property.name='now']",
          message: "lib/control reads no clock.",
        },
      ],
      "no-restricted-globals": ["error", "fetch", "process", "setTimeout", "setInterval"],
    },
  },
]);
