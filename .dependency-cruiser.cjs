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
      name: "database-only-in-modules",
      comment:
        "Only the concept modules (lib/modules) and the connection layer (lib/platform/db) talk to " +
        "PostgreSQL (Prisma, the generated client, pg). Everything else goes through a module, whose " +
        "exported functions authorize their principal first.",
      severity: "error",
      from: {
        path: SHIPPED,
        pathNot: ["^lib/modules/", "^lib/platform/db/", "^lib/generated/", "\\.test\\.tsx?$"],
      },
      to: { path: [DATABASE_PACKAGES, "^lib/generated/", "^lib/platform/db/(prisma|pool)\\.ts$"] },
    },
    {
      name: "ui-reaches-data-through-modules",
      comment:
        "app/ and components/ reach data only through the modules' public files: never the connection " +
        "layer, the generated client or a module's internal/ folder.",
      severity: "error",
      from: { path: "^(app|components)/" },
      to: { path: ["^lib/platform/db/", "^lib/generated/", "^lib/modules/[^/]+/internal/", DATABASE_PACKAGES] },
    },
    {
      name: "edges-enter-a-module-by-its-index",
      comment:
        "Each concept module has one public, authorized entry, lib/modules/<module>/index.ts. The edges " +
        "(API routes, console pages and actions, components, the CLI, start, demo, drill, seed) import " +
        "only that file; modules use each other's public files directly (barrels between modules would " +
        "turn every cross-module import into a cycle).",
      severity: "error",
      from: { path: "^(app|components|bin|lib/(api|actions|cli|start|demo|drill|seed|build))/", pathNot: "\\.test\\.tsx?$" },
      to: { path: "^lib/modules/[^/]+/.", pathNot: "^lib/modules/[^/]+/index\\.ts$" },
    },
    {
      name: "module-internals-stay-in-their-module",
      comment:
        "A module's internal/ folder holds helpers that do not authorize (transaction pieces, shared " +
        "queries): only that module may use them; other modules call its public files.",
      severity: "error",
      from: { path: "^lib/modules/([^/]+)/" },
      to: { path: "^lib/modules/[^/]+/internal/", pathNot: "^lib/modules/$1/" },
    },
    {
      name: "module-internals-not-outside-modules",
      comment: "Nothing outside lib/modules (tests aside) reaches into a module's internal/ folder.",
      severity: "error",
      from: { pathNot: ["^lib/modules/", "^test/"] },
      to: { path: "^lib/modules/[^/]+/internal/" },
    },
    {
      name: "platform-is-the-floor",
      comment:
        "lib/platform (database connections, config, log, wait, errors, ids, security, auth, signing, " +
        "telemetry) serves everything and depends on no concept, engine or edge: only on itself, the pure " +
        "domain, the wire schemas and packages.",
      severity: "error",
      from: { path: "^lib/platform/" },
      to: {
        pathNot: ["^lib/(platform|control|schemas|generated)/", "^node_modules/"],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "request-scope-only-in-sessions",
      comment:
        "Next's request scope (next/headers, next/navigation, next-auth's server entry) exists only inside the web " +
        "process; the CLI and the API process import modules too, so only the sessions module uses it.",
      severity: "error",
      from: { path: "^lib/(modules|platform)/", pathNot: "^lib/modules/sessions/" },
      to: { path: "^node_modules/(next/(headers|navigation)|next-auth/(index|next/|providers/credentials))" },
    },
    {
      name: "modules-are-below-the-edges",
      comment:
        "The concept modules sit under the edges that use them (API routes, console pages and actions, " +
        "the CLI, the start supervisor, demo and drill): a module imports other modules, the platform, the " +
        "pure domain, the wire schemas and the agent-side client's shared pieces, never an edge.",
      severity: "error",
      from: { path: "^lib/modules/" },
      to: {
        pathNot: ["^lib/(modules|platform|control|schemas|generated|agent)/", "^node_modules/"],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "agent-side-imports-no-server-code",
      comment:
        "lib/agent (SDK, adapters, abort tokens, queue guards) runs inside the agent's process: it imports " +
        "only itself, the wire schemas, the pure domain and the platform's process-neutral helpers " +
        "(config, log, wait, errors, ids) — never a module, the database or an edge.",
      severity: "error",
      from: { path: "^lib/agent/" },
      to: {
        pathNot: [
          "^lib/(agent|schemas|control)/",
          "^lib/platform/(config|log)/",
          "^lib/platform/(wait|errors|ids)\\.ts$",
          // pg-boss keeps its jobs in Quiesce's own PostgreSQL: its workers need the database's address
          // (read from the settings; this file opens no connection)
          "^lib/platform/db/url\\.ts$",
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
