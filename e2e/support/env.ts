// What global-setup.ts started, for the specs: where the console is, the demo password, the demo keys.
import { readFileSync } from "node:fs";
import { AgentApi } from "./api";

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the e2e suite through playwright.config.ts (global setup)`);
  return v;
}

export const e2e = {
  get baseUrl() {
    return need("E2E_BASE_URL");
  },
  get databaseUrl() {
    return need("E2E_DATABASE_URL");
  },
  get password() {
    return need("E2E_PASSWORD");
  },
  /** The server's NEXTAUTH_SECRET (E2E_EXTERNAL: set E2E_NEXTAUTH_SECRET to the server's). */
  get nextAuthSecret() {
    return need("E2E_NEXTAUTH_SECRET");
  },
  get simUrl() {
    return process.env.E2E_SIM_URL ?? null;
  },
  keys(): Record<string, { id: string; secret: string }> {
    return (JSON.parse(readFileSync(need("E2E_KEYS_FILE"), "utf8")) as { keys: Record<string, { id: string; secret: string }> }).keys;
  },
  agent(): AgentApi {
    return new AgentApi(this.baseUrl, this.keys().agent!.secret);
  },
  otherTeamAgent(): AgentApi {
    return new AgentApi(this.baseUrl, this.keys().otherAgent!.secret);
  },
};

export const USERS = {
  admin: "admin@demo.quiesce.dev",
  operator: "operator@demo.quiesce.dev",
  manager: "manager@demo.quiesce.dev",
  viewer: "viewer@demo.quiesce.dev",
} as const;
