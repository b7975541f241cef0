// The deployment's Ed25519 signing keys, on disk under the data folder (`<data>/signing/` by default,
// QUIESCE_SIGNING_KEY_DIR to move it). Generated at first use; private keys are written 0600 in a 0700
// folder. Rotation adds a new key and makes it current; old public keys stay and keep being served, so
// receipts signed before a rotation still verify.
//   <dir>/<hex>.key  PKCS#8 PEM (private)     <dir>/<hex>.pub  SPKI PEM     <dir>/current  the current key id
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { keyIdOf, type Signer } from "../../control/evidence/signing";
import { integrationsConfig } from "../config/integrations";

export interface PublicKeyInfo {
  keyid: string;
  algorithm: "ed25519";
  public_key_pem: string;
  created_at: string;
  current: boolean;
}

const fileOf = (keyId: string) => keyId.replace(/^ed25519:/, "");

// Only the key folder itself is private. `mkdirSync(dir, { recursive: true, mode })` would give the mode
// to every folder it creates on the way: the default key folder is $QUIESCE_DATA_DIR/signing, and a data
// folder created 0700 that way (a first command that signed before `npm start` ever ran) locked the
// embedded PostgreSQL's OS user out of $QUIESCE_DATA_DIR/pgdata beside it, so `npm start` failed as root.
function ensureDir(dir: string) {
  mkdirSync(path.dirname(dir), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

function writeNewKey(dir: string): string {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const keyId = keyIdOf(publicKey);
  const base = path.join(dir, fileOf(keyId));
  writeFileSync(`${base}.key`, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600, flag: "wx" });
  chmodSync(`${base}.key`, 0o600);
  writeFileSync(`${base}.pub`, publicKey.export({ type: "spki", format: "pem" }), { mode: 0o644, flag: "wx" });
  return keyId;
}

function readCurrent(dir: string): string | null {
  try {
    return readFileSync(path.join(dir, "current"), "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** Makes `keyId` current atomically (write + rename), so a reader never sees a half-written file. */
function setCurrent(dir: string, keyId: string) {
  const tmp = path.join(dir, `current.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, `${keyId}\n`, { mode: 0o600 });
  renameSync(tmp, path.join(dir, "current"));
}

/** The current key id, generating the first key if there is none (first start). */
export function ensureSigningKey(dir = integrationsConfig().signingKeyDir): string {
  ensureDir(dir);
  const cur = readCurrent(dir);
  if (cur) return cur;
  // First start, possibly several processes at once: create `current` exclusively; the loser reads it.
  const keyId = writeNewKey(dir);
  try {
    writeFileSync(path.join(dir, "current"), `${keyId}\n`, { mode: 0o600, flag: "wx" });
    return keyId;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return readCurrent(dir) ?? keyId;
  }
}

/** The current signer (re-read each call: a `keys rotate` by the CLI takes effect without a restart). */
export function currentSigner(dir = integrationsConfig().signingKeyDir): Signer {
  const keyId = ensureSigningKey(dir);
  const pem = readFileSync(path.join(dir, `${fileOf(keyId)}.key`), "utf8");
  return { keyId, privateKey: createPrivateKey(pem) };
}

/** Adds a new key and makes it current. Returns the new and the previous key id. */
export function rotateSigningKey(dir = integrationsConfig().signingKeyDir): { keyId: string; previous: string | null } {
  ensureDir(dir);
  const previous = readCurrent(dir);
  const keyId = writeNewKey(dir);
  setCurrent(dir, keyId);
  return { keyId, previous };
}

/** Every public key of this deployment, current first, then newest first. */
export function publicKeys(dir = integrationsConfig().signingKeyDir): PublicKeyInfo[] {
  const current = ensureSigningKey(dir);
  const out: PublicKeyInfo[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".pub")) continue;
    const file = path.join(dir, name);
    const pem = readFileSync(file, "utf8");
    const keyid = keyIdOf(createPublicKey(pem));
    out.push({
      keyid,
      algorithm: "ed25519",
      public_key_pem: pem,
      created_at: statSync(file).mtime.toISOString(),
      current: keyid === current,
    });
  }
  return out.sort((a, b) => Number(b.current) - Number(a.current) || b.created_at.localeCompare(a.created_at));
}
