// The real harness binaries, pinned, installed from npm into a per-user cache folder during test setup
// (~/.cache/quiesce/clients, or QUIESCE_CLIENT_CACHE; each pinned version has its own folder, so every
// checkout on the machine — CI's fresh clone included — shares one download of about 800 MB) (never into package.json: a user's `npm install` stays lean). When a binary cannot be
// installed here the tests that need it skip and say why — except under CI, where that is a failure.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const CLIENT_CACHE = process.env.QUIESCE_CLIENT_CACHE || path.join(os.homedir(), ".cache/quiesce/clients");

export const PINNED = {
  claude: { pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.171.0", bin: "codex" },
  everything: { pkg: "@modelcontextprotocol/server-everything", version: "2026.8.31", bin: "mcp-server-everything" },
  // The official A2A SDK, for remote agents in the A2A gateway's tests (its express server needs express).
  a2a: { pkg: "@a2a-js/sdk", version: "1.3.0", bin: "a2a-db", extra: ["express@5.3.0"] },
  // The same SDK at its last A2A v0.3 release: a remote agent that knows only the v0.3 method names.
  // It has no binary, so its package.json says it installed.
  a2a03: { pkg: "@a2a-js/sdk", version: "0.3.14", file: "node_modules/@a2a-js/sdk/package.json", extra: ["express@5.3.0"] },
} as const satisfies Record<string, { pkg: string; version: string; extra?: readonly string[] } & ({ bin: string } | { file: string })>;
export type ClientName = keyof typeof PINNED;

export interface ClientBinary {
  available: true;
  /** The binary, or for a package without one the file that says it installed. */
  bin: string;
  version: string;
  /** The install folder: its node_modules holds the package (and its extras). */
  dir: string;
}
export interface ClientMissing {
  available: false;
  why: string;
}

function dirFor(name: ClientName): string {
  const p = PINNED[name];
  return path.join(CLIENT_CACHE, `${p.pkg.replace(/[@/]/g, "_")}_${p.version}`);
}

/** The pinned binary, installing it into the cache first when needed. */
export async function ensureClient(name: ClientName): Promise<ClientBinary | ClientMissing> {
  const p = PINNED[name];
  const dir = dirFor(name);
  const bin = "bin" in p ? path.join(dir, "node_modules/.bin", p.bin) : path.join(dir, p.file);
  // Test files run in parallel: one installs (holding a lock directory), the others wait for it.
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 600_000;
  while (!existsSync(bin) && Date.now() < deadline) {
    try {
      mkdirSync(path.dirname(lock), { recursive: true });
      mkdirSync(lock);
    } catch {
      // Someone else is installing; a lock older than 15 minutes belongs to a run that died.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* gone already */
      }
      await sleep(1000);
      continue;
    }
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, "package.json"), '{ "private": true }\n');
      const extra: readonly string[] = "extra" in p ? p.extra : [];
      await run("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${p.pkg}@${p.version}`, ...extra], {
        cwd: dir,
        timeout: 600_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      return missing(`${p.pkg}@${p.version} could not be installed into ${dir}: ${(err as Error).message.split("\n")[0]}`);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  if (!existsSync(bin)) return missing(`${p.pkg}@${p.version} installed no ${"bin" in p ? `${p.bin} binary` : p.file}`);
  return { available: true, bin, version: p.version, dir };
}

function missing(why: string): ClientMissing {
  if (process.env.CI) throw new Error(`${why} (CI: the real-client tests must run)`);
  console.warn(`[real clients] SKIPPING: ${why}`);
  return { available: false, why };
}

/** Environment that keeps a real client on 127.0.0.1: every other destination goes to a dead proxy. */
export function noEgressEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    NODE_ENV: "test",
    HTTPS_PROXY: "http://127.0.0.1:9",
    HTTP_PROXY: "http://127.0.0.1:9",
    https_proxy: "http://127.0.0.1:9",
    http_proxy: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
}
