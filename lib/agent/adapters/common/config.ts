// Where an adapter finds the control plane. Every adapter reads QUIESCE_URL and QUIESCE_API_KEY from
// the environment (flags override) so one managed-settings line configures a whole fleet (docs/architecture.md#integrations-fail-closed).
// QUIESCE_API_KEY_FILE lets an operator keep the key out of the agent's own environment.
//
// Managed configuration wins (docs/adapters.md, "Managed configuration"): the person whose session is
// governed must not be able to move it to another control plane or team from their own shell.
//   - A managed config file (JSON: { url?, apiKeyFile?, allowUserOverride? }) — found at the path given
//     by the hook's `--managed <file>` argument (part of the managed hook command), else at
//     /etc/quiesce/managed.json, else at QUIESCE_MANAGED_CONFIG when neither exists — supplies the URL
//     and key; the environment and flags are ignored for what it sets unless `allowUserOverride: true`.
//     An unreadable or malformed managed file is an error (fail closed), never "no policy".
//   - Without one, a key FILE (QUIESCE_API_KEY_FILE, typically set by managed settings) beats a key
//     in the environment (QUIESCE_API_KEY, which any shell can set).
import { existsSync, readFileSync } from "node:fs";
import * as z from "zod/mini";
import { firstIssue } from "./issue";

export class AdapterConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdapterConfigError";
  }
}

export interface AdapterConfig {
  url: string;
  apiKey: string;
}

/** The system-wide managed config location. */
export const MANAGED_CONFIG_PATH = "/etc/quiesce/managed.json";

export const ManagedConfig = z.strictObject({
  url: z.optional(z.string().check(z.minLength(1))),
  apiKeyFile: z.optional(z.string().check(z.minLength(1))),
  /** true: the user's environment (and flags) may override what this file sets. Default false. */
  allowUserOverride: z.optional(z.boolean()),
});
export type ManagedConfig = z.infer<typeof ManagedConfig>;

/** The managed config in force, or null when there is none. */
export function loadManagedConfig(
  explicitPath: string | undefined,
  env: NodeJS.ProcessEnv,
): { path: string; config: ManagedConfig } | null {
  const candidates = explicitPath ? [explicitPath] : [MANAGED_CONFIG_PATH];
  if (!explicitPath && env.QUIESCE_MANAGED_CONFIG && !existsSync(MANAGED_CONFIG_PATH)) candidates.push(env.QUIESCE_MANAGED_CONFIG);
  for (const file of candidates) {
    // A path named on the managed command line must exist; the default location is optional.
    if (file !== explicitPath && !existsSync(file)) continue;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new AdapterConfigError(`managed config ${file} unreadable: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AdapterConfigError(`managed config ${file} is not JSON`);
    }
    const parsed = ManagedConfig.safeParse(json);
    if (!parsed.success) throw new AdapterConfigError(`managed config ${file}: ${firstIssue(ManagedConfig, json)}`);
    return { path: file, config: parsed.data };
  }
  return null;
}

function readKeyFile(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new AdapterConfigError(`${what} unreadable: ${(err as Error).message}`);
  }
}

export function adapterConfig(
  flags: { url?: string; key?: string; managed?: string } = {},
  env: NodeJS.ProcessEnv = process.env,
): AdapterConfig {
  const managed = loadManagedConfig(flags.managed, env);
  const userMay = !managed || managed.config.allowUserOverride === true;
  const userUrl = (flags.url ?? env.QUIESCE_URL ?? "").trim();
  const managedUrl = managed?.config.url?.trim() ?? "";
  const url = managedUrl && !(userMay && userUrl) ? managedUrl : userUrl;
  if (!url) throw new AdapterConfigError("QUIESCE_URL is not set (or pass --url)");
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new AdapterConfigError(`QUIESCE_URL is not an http(s) URL: ${url}`);
  }

  const userKey = (flags.key ?? "").trim();
  const envKey = (env.QUIESCE_API_KEY ?? "").trim();
  let apiKey = "";
  if (managed?.config.apiKeyFile && !(userMay && (userKey || envKey))) {
    apiKey = readKeyFile(managed.config.apiKeyFile, `managed key file ${managed.config.apiKeyFile}`);
  } else if (userKey) {
    apiKey = userKey;
  } else if (env.QUIESCE_API_KEY_FILE) {
    // A key file beats a key in the environment: managed settings set the file, any shell can set the key.
    apiKey = readKeyFile(env.QUIESCE_API_KEY_FILE, "QUIESCE_API_KEY_FILE");
  } else {
    apiKey = envKey;
  }
  if (!apiKey) throw new AdapterConfigError("QUIESCE_API_KEY is not set (or QUIESCE_API_KEY_FILE, or pass --key)");
  return { url: url.replace(/\/+$/, ""), apiKey };
}
