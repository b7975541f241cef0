// Where an adapter finds the control plane. Every adapter reads QUIESCE_URL and QUIESCE_API_KEY from
// the environment (flags override) so one managed-settings line configures a whole fleet (docs/architecture.md#integrations-fail-closed).
// QUIESCE_API_KEY_FILE lets an operator keep the key out of the agent's own environment.
import { readFileSync } from "node:fs";

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

export function adapterConfig(flags: { url?: string; key?: string } = {}, env: NodeJS.ProcessEnv = process.env): AdapterConfig {
  const url = (flags.url ?? env.QUIESCE_URL ?? "").trim();
  if (!url) throw new AdapterConfigError("QUIESCE_URL is not set (or pass --url)");
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new AdapterConfigError(`QUIESCE_URL is not an http(s) URL: ${url}`);
  }
  let apiKey = (flags.key ?? env.QUIESCE_API_KEY ?? "").trim();
  if (!apiKey && env.QUIESCE_API_KEY_FILE) {
    try {
      apiKey = readFileSync(env.QUIESCE_API_KEY_FILE, "utf8").trim();
    } catch (err) {
      throw new AdapterConfigError(`QUIESCE_API_KEY_FILE unreadable: ${(err as Error).message}`);
    }
  }
  if (!apiKey) throw new AdapterConfigError("QUIESCE_API_KEY is not set (or QUIESCE_API_KEY_FILE, or pass --key)");
  return { url: url.replace(/\/+$/, ""), apiKey };
}
