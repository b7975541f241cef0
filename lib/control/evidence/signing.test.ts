// The DSSE/in-toto signing core, property-tested: whatever the predicate, a signed envelope verifies
// with the signer's public key only, and any single changed payload byte or signature byte fails.
import { generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { expect, test } from "vitest";
import { keyIdOf, pae, signStatement, statementFor, verifyEnvelope, DSSE_PAYLOAD_TYPE } from "./signing";

const a = generateKeyPairSync("ed25519");
const b = generateKeyPairSync("ed25519");
const signer = { keyId: keyIdOf(a.publicKey), privateKey: a.privateKey };
const trusted = new Map([[signer.keyId, a.publicKey]]);
const json = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });

test("PAE is the DSSE v1 encoding with byte lengths", () => {
  expect(pae("t", Buffer.from("")).toString()).toBe("DSSEv1 1 t 0 ");
  expect(pae(DSSE_PAYLOAD_TYPE, Buffer.from("ü")).toString()).toBe(`DSSEv1 28 ${DSSE_PAYLOAD_TYPE} 2 ü`);
});

test("sign → verify round-trips; another key is unknown; any flipped byte fails", () => {
  fc.assert(
    fc.property(json, fc.nat(), fc.integer({ min: 1, max: 255 }), (predicate, at, flip) => {
      const env = signStatement(statementFor("https://example.test/p/v1", { name: "s", sha256: "0".repeat(64) }, predicate), signer);
      const ok = verifyEnvelope(env, trusted);
      expect(ok.ok).toBe(true);
      if (ok.ok) expect(ok.statement.predicate).toEqual(JSON.parse(JSON.stringify(predicate)));
      const other = verifyEnvelope(env, new Map([[keyIdOf(b.publicKey), b.publicKey]]));
      expect(other).toMatchObject({ ok: false, kind: "unknown_key" });
      // A different key presented under the signer's key id: the signature does not verify.
      expect(verifyEnvelope(env, new Map([[signer.keyId, b.publicKey]]))).toMatchObject({ ok: false, kind: "bad_signature" });
      const payload = Buffer.from(env.payload, "base64");
      payload[at % payload.length]! ^= flip;
      const tampered = verifyEnvelope({ ...env, payload: payload.toString("base64") }, trusted);
      expect(tampered.ok).toBe(false);
      const sig = Buffer.from(env.signatures[0]!.sig, "base64");
      sig[at % sig.length]! ^= flip;
      expect(verifyEnvelope({ ...env, signatures: [{ keyid: signer.keyId, sig: sig.toString("base64") }] }, trusted).ok).toBe(false);
    }),
    { numRuns: 150 },
  );
});

test("not an envelope, a wrong payload type, no signatures", () => {
  const env = signStatement(statementFor("p", { name: "s", sha256: "1".repeat(64) }, {}), signer);
  expect(verifyEnvelope({}, trusted)).toMatchObject({ ok: false, kind: "malformed" });
  expect(verifyEnvelope({ ...env, payloadType: "text/plain" }, trusted)).toMatchObject({ ok: false, kind: "malformed" });
  expect(verifyEnvelope({ ...env, signatures: [] }, trusted)).toMatchObject({ ok: false, kind: "bad_signature" });
  expect(verifyEnvelope({ ...env, payload: Buffer.from("{}").toString("base64") }, trusted)).toMatchObject({
    ok: false,
    kind: "malformed",
  });
});
