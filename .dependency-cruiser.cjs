// Import boundaries, checked by `npm run lint` (dependency-cruiser). The rules and why they exist are
// in docs/architecture.md#layers-and-boundaries; the choice of tool in CONTRIBUTING.md#the-rules.
/** @type {import('dependency-cruiser').IConfiguration} */
const DATABASE_PACKAGES = "^node_modules/(pg|pg-pool|pg-protocol|@prisma/client|@prisma/adapter-pg|prisma)/";
const SHIPPED = "^(lib|app|components|bin|proxy\\.ts|instrumentation\\.ts)";

module.exports = {
  forbidden: [
    {
      name: "control-is-pure",
      comment:
        "lib/control is the pure domain: rules and decisions as functions of their inputs. It imports " +
        "nothing that does I/O (no database, network, files, clock-reading modules or other layers), so " +
        "it can be property-tested in milliseconds.",
      severity: "error",
      from: { path: "^lib/control/", pathNot: "\\.test\\.ts$" },
      to: { pathNot: ["^lib/control/", "^node_modules/(zod|yaml|canonicalize)/"], dependencyTypesNot: ["core"] },
    },
    {
      name: "control-no-io-core-modules",
      comment: "lib/control may use node:crypto (hashing is computation); no other Node built-in.",
      severity: "error",
      from: { path: "^lib/control/", pathNot: "\\.test\\.ts$" },
      to: { dependencyTypes: ["core"], pathNot: "^(node:)?crypto$" },
    },
    {
      name: "database-only-in-dal-gate-db",
      comment:
        "Only lib/dal, lib/gate and lib/db talk to PostgreSQL (Prisma, the generated client, pg). " +
        "Everything else goes through lib/dal, whose exported functions authorize their principal first.",
      severity: "error",
      from: {
        path: SHIPPED,
        pathNot: ["^lib/(dal|gate|db)/", "^lib/generated/", "\\.test\\.tsx?$"],
      },
      to: { path: [DATABASE_PACKAGES, "^lib/generated/", "^lib/db/(prisma|pool)\\.ts$"] },
    },
    {
      name: "ui-reaches-data-through-dal",
      comment:
        "app/ and components/ reach data only through lib/dal's public modules: never lib/db, lib/gate, " +
        "the generated client or lib/dal/internal.",
      severity: "error",
      from: { path: "^(app|components)/" },
      to: { path: ["^lib/(db|gate|generated)/", "^lib/dal/internal/", DATABASE_PACKAGES] },
    },
    {
      name: "dal-internal-stays-in-dal",
      comment: "lib/dal/internal holds helpers that do not authorize (transactions, shared queries): only lib/dal may use them.",
      severity: "error",
      // lib/gate is the dal's peer on the hot path (one SQL statement); it records its breaker audit rows
      // with the dal's internal helper.
      from: { pathNot: ["^lib/dal/", "^lib/gate/", "^test/"] },
      to: { path: "^lib/dal/internal/" },
    },
    {
      name: "dal-is-a-lower-layer",
      comment:
        "lib/dal sits under the engines that use it (barrier, abort tokens, API, console actions): it may " +
        "import the database, the pure domain, schemas and shared utilities, never a layer above it, so " +
        "the layers cannot form a cycle even through different files.",
      severity: "error",
      from: { path: "^lib/dal/" },
      to: {
        pathNot: [
          "^lib/(dal|db|gate|control|schemas|config|log|generated)/",
          "^lib/(errors|ids|keys|wait)\\.ts$",
          // password hashing, next-auth's options (the session reader needs them) and provider types
          "^lib/auth/(password|options)\\.ts$",
          "^lib/providers/types\\.ts$",
          // the kill's outbound step after commit: removing not-yet-started jobs from pg-boss / BullMQ
          // (imports only the queue clients and the database URL; the barrier engine repeats it)
          "^lib/queues/(cancel|names)\\.ts$",
          // cross-cutting reporting the dal feeds, like lib/log: CloudEvent building and signing,
          // the receipt-signing key store, trace spans and metric registries (never the webhook worker)
          "^lib/integrations/(events|event-types|keystore|tracing|metrics|config|keys-document)\\.ts$",
          // the webhook URL check a save shares with the worker: resolves and judges, sends nothing
          "^lib/integrations/webhook-target\\.ts$",
          // pure input and session rules shared with the API layer
          "^lib/security/(text|session-policy)\\.ts$",
          "^node_modules/",
        ],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "lib-never-imports-bin",
      comment: "bin/ is the command-line shell around lib/; lib/ must not depend on it.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^bin/" },
    },
    {
      name: "no-circular",
      comment: "No import cycles: each layer can be read, tested and replaced on its own.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "declared-dependencies-only",
      comment: "Every package imported is declared in package.json (a transitive package can vanish on any install).",
      severity: "error",
      from: {},
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "shipped-code-uses-runtime-dependencies",
      comment: "What runs in production (lib, app, components, bin) imports only dependencies, never devDependencies.",
      severity: "error",
      from: { path: SHIPPED, pathNot: "\\.test\\.tsx?$" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-unresolvable",
      comment: "Every import resolves (a typo in a path is an error here, not at run time).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^lib/generated/", "^\\.next/", "^\\.quiesce/", "^test-results/", "^playwright-report/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types", "react-server"],
      extensions: [".ts", ".tsx", ".mjs", ".js", ".cjs", ".json", ".d.ts"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
