// Offline verification of signed stop receipts (what `quiesce verify` runs): each file's signature
// (DSSE over an in-toto Statement, Ed25519), the key id, the receipt digest (the one verifier,
// lib/control/evidence/receipt), the Statement's subject, and the version chain across several
// versions. Pure over parsed inputs: the command reads files and keys.
import "server-only";
import { createPublicKey, type KeyObject } from "node:crypto";
import { verifyReceipt } from "../../control/evidence/receipt";
import { isEnvelope, keyIdOf, STOP_RECEIPT_PREDICATE, verifyEnvelope, readStatement } from "../../control/evidence/signing";

export type FailureKind = "unreadable" | "malformed" | "unknown_key" | "bad_signature" | "unsigned" | "digest" | "chain";

/** Exit code per failure kind (0 = everything verified, 2 = bad usage). */
export const EXIT_CODES: Record<FailureKind, number> = {
  unreadable: 2,
  digest: 3,
  bad_signature: 4,
  unsigned: 4,
  unknown_key: 5,
  chain: 6,
  malformed: 7,
};

export interface Failure {
  kind: FailureKind;
  source: string;
  detail: string;
}
export interface VerifiedReceipt {
  source: string;
  barrierId: string;
  version: number;
  digest: string;
  previousDigest: string | null;
  keyId: string | null;
}
export interface VerifyReport {
  ok: boolean;
  failures: Failure[];
  receipts: VerifiedReceipt[];
  exitCode: number;
}

/** Trusted keys from PEM texts (their ids computed) and/or a keys.json document. */
export function trustedKeys(input: { pems?: string[]; keysJson?: unknown }): Map<string, KeyObject> {
  const out = new Map<string, KeyObject>();
  for (const pem of input.pems ?? []) {
    const k = createPublicKey(pem);
    out.set(keyIdOf(k), k);
  }
  const doc = input.keysJson as { keys?: { keyid?: string; public_key_pem?: string }[] } | undefined;
  for (const entry of doc?.keys ?? []) {
    if (!entry?.public_key_pem) continue;
    const k = createPublicKey(entry.public_key_pem);
    const id = keyIdOf(k);
    // A keys document whose key id does not match its own key is not trusted for that id.
    if (entry.keyid && entry.keyid !== id) throw new Error(`keys document: key id ${entry.keyid} does not match its public key (${id})`);
    out.set(id, k);
  }
  return out;
}

type Item = { source: string; value: unknown };

/** Expands a file's JSON into items: one envelope or receipt, an array of them, or { envelopes: [...] }. */
export function itemsOf(source: string, json: unknown): Item[] {
  if (Array.isArray(json)) return json.map((v, i) => ({ source: `${source}[${i}]`, value: v }));
  const env = (json as { envelopes?: unknown })?.envelopes;
  if (Array.isArray(env)) return env.map((v, i) => ({ source: `${source}#envelopes[${i}]`, value: v }));
  const one = (json as { envelope?: unknown })?.envelope;
  if (one && isEnvelope(one)) return [{ source, value: one }];
  return [{ source, value: json }];
}

/**
 * Verifies every item. `keys` null = digest-only (no signature check, which the caller asked for
 * explicitly). Failures are reported for every item; the exit code is the first failure's.
 */
export function verifyReceipts(items: Item[], keys: ReadonlyMap<string, KeyObject> | null): VerifyReport {
  const failures: Failure[] = [];
  const receipts: VerifiedReceipt[] = [];
  for (const { source, value } of items) {
    let body: Record<string, unknown> | null = null;
    let keyId: string | null = null;
    if (isEnvelope(value)) {
      const st = readStatement(value);
      if (!st) {
        failures.push({ kind: "malformed", source, detail: "the envelope's payload is not an in-toto Statement v1" });
        continue;
      }
      if (st.predicateType !== STOP_RECEIPT_PREDICATE) {
        failures.push({
          kind: "malformed",
          source,
          detail: `predicateType ${st.predicateType} is not a stop receipt (${STOP_RECEIPT_PREDICATE})`,
        });
        continue;
      }
      body = st.predicate;
      if (keys) {
        const check = verifyEnvelope(value, keys);
        if (!check.ok) {
          failures.push({ kind: check.kind === "malformed" ? "malformed" : check.kind, source, detail: check.detail });
          continue;
        }
        keyId = check.keyId;
      }
      const subject = st.subject[0]?.digest?.sha256;
      if (subject !== body.digest)
        failures.push({
          kind: "digest",
          source,
          detail: `the Statement's subject digest ${String(subject)} is not the receipt's digest ${String(body.digest)}`,
        });
    } else if (value && typeof value === "object" && typeof (value as { digest?: unknown }).digest === "string" && "barrier_id" in value) {
      body = value as Record<string, unknown>;
      if (keys) {
        failures.push({
          kind: "unsigned",
          source,
          detail: "a bare receipt carries no signature: verify the envelope download (stop-receipt-….dsse.json) instead",
        });
        continue;
      }
    } else {
      failures.push({ kind: "malformed", source, detail: "neither a DSSE envelope nor a stop receipt" });
      continue;
    }
    const v = verifyReceipt({ body });
    if (!v.ok) {
      failures.push({
        kind: "digest",
        source,
        detail: `${v.detail} (receipt says ${String(body.digest)}, body hashes to ${v.recomputed})`,
      });
      continue;
    }
    receipts.push({
      source,
      barrierId: String(body.barrier_id),
      version: Number(body.version),
      digest: String(body.digest),
      previousDigest: typeof body.previous_digest === "string" ? body.previous_digest : null,
      keyId,
    });
  }
  failures.push(...checkChain(receipts));
  return { ok: failures.length === 0, failures, receipts, exitCode: failures.length ? EXIT_CODES[failures[0]!.kind] : 0 };
}

/** Several versions of one barrier's receipt must form an unbroken chain: n+1 names n's digest. */
export function checkChain(receipts: VerifiedReceipt[]): Failure[] {
  if (receipts.length < 2) {
    const r = receipts[0];
    if (r && r.version === 1 && r.previousDigest !== null)
      return [{ kind: "chain", source: r.source, detail: "version 1 names a previous digest" }];
    return [];
  }
  const barriers = new Set(receipts.map((r) => r.barrierId));
  if (barriers.size > 1)
    return [
      {
        kind: "chain",
        source: receipts.map((r) => r.source).join(", "),
        detail: `the files are receipts of different barriers (${[...barriers].join(", ")})`,
      },
    ];
  const sorted = [...receipts].sort((a, b) => a.version - b.version);
  const out: Failure[] = [];
  if (sorted[0]!.version === 1 && sorted[0]!.previousDigest !== null)
    out.push({ kind: "chain", source: sorted[0]!.source, detail: "version 1 names a previous digest" });
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!,
      b = sorted[i]!;
    if (b.version === a.version)
      out.push({
        kind: "chain",
        source: `${a.source}, ${b.source}`,
        detail: `two receipts claim version ${a.version}${a.digest === b.digest ? " (the same one twice)" : " with different digests"}`,
      });
    else if (b.version !== a.version + 1)
      out.push({
        kind: "chain",
        source: b.source,
        detail: `version ${b.version} follows version ${a.version}: version ${a.version + 1} is missing`,
      });
    else if (b.previousDigest !== a.digest)
      out.push({
        kind: "chain",
        source: b.source,
        detail: `version ${b.version} names previous digest ${String(b.previousDigest)}, but version ${a.version}'s digest is ${a.digest}`,
      });
  }
  return out;
}
