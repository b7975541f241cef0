// `quiesce keys create|list|revoke`: the admin path to API keys, straight to the database as a system
// principal (this is how the first operator key comes to exist). `create` prints ONLY the secret on
// stdout, so `KEY=$(npm run -s quiesce -- keys create …)` works; details go to stderr.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { parseDuration } from "../../lib/cli/duration";
import { ACTIONS } from "../../lib/control/authz";
import { KEY_KINDS, type KeyKind } from "../../lib/control/types";
import { createApiKey, listApiKeys, revokeApiKey } from "../../lib/modules/keys";
import { findTeamBySlug, findUserByEmail } from "../../lib/modules/members";
import type { Principal } from "../../lib/platform/auth/principal";
import { withDatabase } from "../../lib/start/database";

const SYSTEM: Principal = { type: "system", name: "cli" };
const USAGE = [
  "npm run quiesce -- keys create --team <slug> --kind agent|worker|gateway|operator [--user <email>] [--name <text>] [--scopes a,b] [--expires-in 30d]",
  "       npm run quiesce -- keys list --team <slug> [--all] [--json]",
  "       npm run quiesce -- keys revoke <keyId> [--json]",
  "       npm run quiesce -- keys public [--json | --pem]      the receipt-signing public keys (as served at /.well-known/quiesce/keys.json)",
  "       npm run quiesce -- keys rotate                       a new receipt-signing key becomes current; old public keys stay",
].join("\n");

function parseScopes(text: string | undefined): string[] {
  if (text === undefined) return [];
  const scopes = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const valid = new Set<string>(["*", ...ACTIONS]);
  const bad = scopes.find((s) => !valid.has(s));
  if (bad !== undefined) throw new UsageError(`--scopes: unknown scope "${bad}" (valid: *, ${ACTIONS.join(", ")})`);
  return scopes;
}

async function create(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    team: { type: "string" },
    kind: { type: "string" },
    user: { type: "string" },
    name: { type: "string" },
    scopes: { type: "string" },
    "expires-in": { type: "string" },
  });
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  // Everything checkable without the database is checked first: bad input changes nothing.
  const slug = requireFlag(values.team, "team");
  const kind = requireFlag(values.kind, "kind");
  if (!(KEY_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind: must be one of ${KEY_KINDS.join(", ")}, got "${kind}"`);
  if (kind === "operator" && !values.user)
    throw new UsageError("--user is required for --kind operator (an operator key carries that user's role)");
  if (kind !== "operator" && values.user)
    throw new UsageError("--user is only for --kind operator (machine keys are not bound to a person)");
  if (values.name !== undefined && values.name.trim() === "") throw new UsageError("--name: must not be empty");
  const scopes = parseScopes(values.scopes);
  const expiresAt = values["expires-in"] === undefined ? null : new Date(Date.now() + parseDuration(values["expires-in"], "expires-in"));

  return withDatabase(async () => {
    const team = await findTeamBySlug(SYSTEM, slug);
    if (!team) throw new UsageError(`--team: no team with slug "${slug}"`);
    let userId: string | undefined;
    if (values.user) {
      const user = await findUserByEmail(SYSTEM, values.user);
      if (!user) throw new UsageError(`--user: no user with email "${values.user}"`);
      userId = user.id;
    }
    const name = values.name?.trim() ?? (values.user ? `${kind} key for ${values.user}` : `${kind} key (cli)`);
    const key = await createApiKey(SYSTEM, { teamId: team.id, kind: kind as KeyKind, name, userId, scopes, expiresAt });
    console.error(
      `created ${key.kind} key ${key.id} "${key.name}" for team ${team.slug}` +
        `${scopes.length ? ` scopes=${scopes.join(",")}` : ""}${key.expiresAt ? ` expires ${key.expiresAt}` : ""} — the secret below is shown once:`,
    );
    console.log(key.secret);
    return 0;
  });
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { team: { type: "string" }, all: { type: "boolean" }, json: { type: "boolean" } });
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const slug = requireFlag(values.team, "team");
  return withDatabase(async () => {
    const team = await findTeamBySlug(SYSTEM, slug);
    if (!team) throw new UsageError(`--team: no team with slug "${slug}"`);
    const keys = await listApiKeys(SYSTEM, { teamId: team.id, includeRevoked: values.all });
    if (values.json) {
      console.log(JSON.stringify(keys, null, 2));
      return 0;
    }
    if (keys.length === 0) console.log(`no ${values.all ? "" : "active "}keys for team ${slug}`);
    for (const k of keys) {
      const state = k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt ? `expires ${k.expiresAt}` : "active";
      console.log(
        [k.id, k.kind.padEnd(8), JSON.stringify(k.name), state, k.scopes.length ? `scopes=${k.scopes.join(",")}` : ""].join("  ").trimEnd(),
      );
    }
    return 0;
  });
}

async function revoke(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: "boolean" } });
  if (positionals.length !== 1)
    throw new UsageError(positionals.length ? `expected one key id, got ${positionals.length}` : "a key id is required");
  const id = positionals[0]!;
  if (!/^key_[A-Za-z0-9_-]+$/.test(id)) throw new UsageError(`not a key id: "${id}" (key ids look like key_…)`);
  return withDatabase(async () => {
    const key = await revokeApiKey(SYSTEM, id);
    if (values.json) console.log(JSON.stringify(key));
    else console.log(`revoked ${key.id} (${key.kind} "${key.name}") at ${key.revokedAt}`);
    return 0;
  });
}

/** The deployment's receipt-signing keys (files under the data folder; no database needed). */
async function signingPublic(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: "boolean" }, pem: { type: "boolean" } }, { positionals: false });
  if (values.json && values.pem) throw new UsageError("--json and --pem: choose one");
  const { publicKeys, keysDocument } = await import("../../lib/platform/signing/keys-document");
  const keys = publicKeys();
  if (values.json) {
    console.log(JSON.stringify(keysDocument(), null, 2));
    return 0;
  }
  if (values.pem) {
    process.stdout.write(keys.find((k) => k.current)!.public_key_pem);
    return 0;
  }
  for (const k of keys)
    console.log(`${k.keyid}${k.current ? "  (current)" : ""}  created ${k.created_at}\n${k.public_key_pem.trimEnd()}\n`);
  return 0;
}

async function signingRotate(argv: string[]): Promise<number> {
  parseFlags(argv, {}, { positionals: false });
  const { rotateSigningKey } = await import("../../lib/platform/signing/keystore");
  const { keyId, previous } = rotateSigningKey();
  console.log(`new receipt-signing key ${keyId} is current${previous ? `; ${previous} stays published for receipts it signed` : ""}`);
  return 0;
}

export const keysCommand: Command = {
  summary: "create, list or revoke API keys (create prints only the secret); receipt-signing keys: public, rotate",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "create") return create(rest);
    if (sub === "list") return list(rest);
    if (sub === "revoke") return revoke(rest);
    if (sub === "public") return signingPublic(rest);
    if (sub === "rotate") return signingRotate(rest);
    throw new UsageError(sub ? `unknown subcommand "keys ${sub}"` : "a subcommand is required: create, list, revoke, public or rotate");
  },
};
