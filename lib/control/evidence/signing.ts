// Signed statements: an in-toto Statement v1 in a DSSE envelope, signed with Ed25519. Generic over the
// predicate type, so a stop receipt and (later) a fleet receipt are signed the same way. Pure: the
// private key is passed in by the caller (lib/platform/signing/keystore reads it), nothing is read here.
import { createHash, createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";

export const DSSE_PAYLOAD_TYPE = "application/vnd.in-toto+json";
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const STOP_RECEIPT_PREDICATE = "https://quiesce.dev/stop-receipt/v1";

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: { name: string; digest: { sha256: string } }[];
  predicateType: string;
  predicate: Record<string, unknown>;
}
export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}
export interface Signer {
  keyId: string;
  privateKey: KeyObject;
}

/** DSSE pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body (lengths in bytes). */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** Key id of a public key: "ed25519:" + the first 16 bytes (hex) of sha256 over its SPKI DER. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: "spki", format: "der" });
  return `ed25519:${createHash("sha256").update(der).digest("hex").slice(0, 32)}`;
}

export function statementFor(
  predicateType: string,
  subject: { name: string; sha256: string },
  predicate: Record<string, unknown>,
): Statement {
  return { _type: STATEMENT_TYPE, subject: [{ name: subject.name, digest: { sha256: subject.sha256 } }], predicateType, predicate };
}

/** Signs any statement: the one path for every signed thing this deployment issues. */
export function signStatement(statement: Statement, signer: Signer): DsseEnvelope {
  const payload = Buffer.from(JSON.stringify(statement), "utf8");
  const sig = edSign(null, pae(DSSE_PAYLOAD_TYPE, payload), signer.privateKey);
  return {
    payloadType: DSSE_PAYLOAD_TYPE,
    payload: payload.toString("base64"),
    signatures: [{ keyid: signer.keyId, sig: sig.toString("base64") }],
  };
}

export type EnvelopeFailure = "malformed" | "unknown_key" | "bad_signature";
export type EnvelopeCheck =
  { ok: true; keyId: string; statement: Statement } | { ok: false; kind: EnvelopeFailure; detail: string; statement?: Statement };

export function isEnvelope(x: unknown): x is DsseEnvelope {
  const e = x as DsseEnvelope;
  return !!e && typeof e === "object" && typeof e.payloadType === "string" && typeof e.payload === "string" && Array.isArray(e.signatures);
}

/** Decodes the statement without checking any signature (to say what a bad envelope claims). */
export function readStatement(env: DsseEnvelope): Statement | null {
  try {
    const s = JSON.parse(Buffer.from(env.payload, "base64").toString("utf8")) as Statement;
    if (
      s?._type !== STATEMENT_TYPE ||
      !Array.isArray(s.subject) ||
      typeof s.predicateType !== "string" ||
      typeof s.predicate !== "object" ||
      !s.predicate
    )
      return null;
    return s;
  } catch {
    return null;
  }
}

/**
 * Checks an envelope against a set of trusted public keys (key id → key or PEM text). Valid when one
 * signature's key id is trusted and its Ed25519 signature over PAE(payloadType, payload) verifies.
 */
export function verifyEnvelope(env: unknown, keys: ReadonlyMap<string, KeyObject | string>): EnvelopeCheck {
  if (!isEnvelope(env)) return { ok: false, kind: "malformed", detail: "not a DSSE envelope (payloadType, payload, signatures)" };
  if (env.payloadType !== DSSE_PAYLOAD_TYPE)
    return { ok: false, kind: "malformed", detail: `payloadType is "${env.payloadType}", expected ${DSSE_PAYLOAD_TYPE}` };
  const statement = readStatement(env);
  if (!statement) return { ok: false, kind: "malformed", detail: "the payload is not an in-toto Statement v1" };
  if (!env.signatures.length) return { ok: false, kind: "bad_signature", detail: "the envelope carries no signature", statement };
  const payload = Buffer.from(env.payload, "base64");
  const unknown: string[] = [];
  for (const s of env.signatures) {
    const k = keys.get(s?.keyid);
    if (!k) {
      unknown.push(String(s?.keyid));
      continue;
    }
    const key = typeof k === "string" ? createPublicKey(k) : k;
    let good = false;
    try {
      good = edVerify(null, pae(env.payloadType, payload), key, Buffer.from(String(s.sig), "base64"));
    } catch {
      good = false;
    }
    if (good) return { ok: true, keyId: s.keyid, statement };
    return {
      ok: false,
      kind: "bad_signature",
      detail: `the Ed25519 signature by key ${s.keyid} does not verify over the payload`,
      statement,
    };
  }
  return {
    ok: false,
    kind: "unknown_key",
    detail: `signed by key ${unknown.join(", ")}, which is not among the trusted keys (${[...keys.keys()].join(", ") || "none"})`,
    statement,
  };
}
