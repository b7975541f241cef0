// Signed receipts end to end: receipts issued by the real issuer (in a real transaction, with the
// deployment key on disk), downloaded in the form the console serves, then verified by the real CLI
// as a separate process, OFFLINE, with only the public key file: it accepts them, and rejects one
// changed byte, a wrong key and a broken version chain, each with its own exit code and reason.
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { issueReceiptTx, lockBarrierTx } from "../../lib/modules/stop/internal/receipts";
import { getConsoleReceipt } from "../../lib/modules/stop/console/receipt";
import { envelopeText, serializeReceipt } from "../../lib/control/evidence/receipt";
import { DSSE_PAYLOAD_TYPE, STATEMENT_TYPE, STOP_RECEIPT_PREDICATE, pae } from "../../lib/control/evidence/signing";
import { runCli } from "../cli/run-cli";
import { makeTeam, makeTree, type TeamFixture } from "../barrier/fixtures";

// This file's own key folder, so rotating here touches no other test's key.
const keyDir = mkdtempSync(path.join(tmpdir(), "quiesce-signing-test-"));
process.env.QUIESCE_SIGNING_KEY_DIR = keyDir;
const env = { QUIESCE_SIGNING_KEY_DIR: keyDir };
const work = mkdtempSync(path.join(tmpdir(), "quiesce-verify-"));
const file = (name: string, text: string) => {
  const p = path.join(work, name);
  writeFileSync(p, text);
  return p;
};

let team: TeamFixture;
beforeAll(async () => {
  team = await makeTeam();
});
afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

/** Kills a fresh run and issues `versions` receipt versions through the real issuer. */
async function signedBarrier(versions: number): Promise<string> {
  const { root } = await makeTree(team.teamId, 1);
  const { barrierId } = await killRun(team.users.operator.principal, root.runId, "signing test");
  for (let v = 0; v < versions; v++) {
    await prisma().$transaction(async (tx) => {
      await lockBarrierTx(tx, barrierId);
      await issueReceiptTx(tx, barrierId);
    });
  }
  return barrierId;
}

/** What the console's "Download signed envelope" sends for that version. */
async function downloadEnvelope(barrierId: string, version: number): Promise<string> {
  const r = await getConsoleReceipt(team.users.viewer.principal, barrierId, version);
  return envelopeText(r!.envelope);
}

describe("signed stop receipts", () => {
  test("the key is generated at first use, private key 0600; the envelope is an in-toto Statement v1 in DSSE", async () => {
    const barrierId = await signedBarrier(1);
    const current = readFileSync(path.join(keyDir, "current"), "utf8").trim();
    expect(current).toMatch(/^ed25519:[0-9a-f]{32}$/);
    expect(statSync(path.join(keyDir, `${current.slice(8)}.key`)).mode & 0o777).toBe(0o600);
    const env1 = JSON.parse(await downloadEnvelope(barrierId, 1));
    expect(env1.payloadType).toBe(DSSE_PAYLOAD_TYPE);
    expect(env1.signatures).toEqual([{ keyid: current, sig: expect.any(String) }]);
    const st = JSON.parse(Buffer.from(env1.payload, "base64").toString("utf8"));
    const r = await getConsoleReceipt(team.users.viewer.principal, barrierId, 1);
    expect(st).toEqual({
      _type: STATEMENT_TYPE,
      subject: [{ name: `stop-receipt/${barrierId}/v1`, digest: { sha256: r!.digest } }],
      predicateType: STOP_RECEIPT_PREDICATE,
      predicate: JSON.parse(serializeReceipt(r!.body, "json")),
    });
    expect(r!.signature).toEqual({ valid: true, keyId: current, detail: expect.any(String) });
    // PAE per the DSSE spec, byte lengths included.
    expect(pae("a/b", Buffer.from("héllo")).toString()).toBe("DSSEv1 3 a/b 6 héllo");
  });

  test("the CLI verifies downloads offline with the public key file and rejects a changed byte, a wrong key and a broken chain", async () => {
    const barrierId = await signedBarrier(3);
    const other = await signedBarrier(2);
    const pub = await runCli(["keys", "public", "--pem"], env);
    expect(pub.code, pub.stderr).toBe(0);
    const pubFile = file("pub.pem", pub.stdout);
    const [v1, v2, v3] = await Promise.all([1, 2, 3].map(async (v) => file(`v${v}.dsse.json`, await downloadEnvelope(barrierId, v))));
    const o2 = file("other-v2.dsse.json", await downloadEnvelope(other, 2));

    const ok = await runCli(["verify", v1!, v2!, v3!, "--key", pubFile], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/signature valid \(key ed25519:[0-9a-f]{32}\)/);
    expect(ok.stdout).toContain("version chain v1 → v2 → v3 is unbroken");

    // One byte of the receipt changed inside the signed payload (a count 0 → 1), re-encoded.
    const e = JSON.parse(readFileSync(v2!, "utf8"));
    const text = Buffer.from(e.payload, "base64").toString("utf8");
    const i = text.indexOf('"in_flight_pending":0');
    expect(i).toBeGreaterThan(0);
    const changed = text.slice(0, i + 20) + "1" + text.slice(i + 21);
    const tampered = file("tampered.dsse.json", JSON.stringify({ ...e, payload: Buffer.from(changed).toString("base64") }));
    const bad = await runCli(["verify", tampered, "--key", pubFile], env);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain("FAIL (bad_signature)");
    expect(bad.stderr).toContain("does not verify");

    // One byte changed in the plain receipt download: the digest check catches it.
    const plain = (await getConsoleReceipt(team.users.viewer.principal, barrierId, 1))!;
    const body = serializeReceipt(plain.body, "json");
    const j = body.indexOf('"runs_in_subtree": 2') >= 0 ? body.indexOf('"runs_in_subtree": 2') : body.indexOf('"runs_in_subtree":2');
    expect(j).toBeGreaterThan(0);
    const bodyChanged = file("receipt-changed.json", body.replace(/("runs_in_subtree":\s*)2/, "$13"));
    const dig = await runCli(["verify", bodyChanged, "--digest-only"], env);
    expect(dig.code).toBe(3);
    expect(dig.stderr).toContain("FAIL (digest)");
    const bare = await runCli(["verify", file("receipt.json", body), "--key", pubFile], env);
    expect(bare.code).toBe(4);
    expect(bare.stderr).toContain("FAIL (unsigned)");

    // A wrong key: a key pair that is not this deployment's.
    const wrong = file("wrong.pem", generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString());
    const wk = await runCli(["verify", v1!, "--key", wrong], env);
    expect(wk.code).toBe(5);
    expect(wk.stderr).toMatch(/FAIL \(unknown_key\).*not among the trusted keys/);

    // Broken chains: a missing version, and versions of two different barriers.
    const gap = await runCli(["verify", v1!, v3!, "--key", pubFile], env);
    expect(gap.code).toBe(6);
    expect(gap.stderr).toContain("version 2 is missing");
    const mixed = await runCli(["verify", v1!, o2, "--key", pubFile], env);
    expect(mixed.code).toBe(6);
    expect(mixed.stderr).toContain("different barriers");

    const usage = await runCli(["verify", v1!], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--key");
  }, 120_000);

  test("rotation: new receipts use the new key; old receipts still verify with the published keys", async () => {
    const before = await signedBarrier(1);
    const oldPem = file("old.pem", (await runCli(["keys", "public", "--pem"], env)).stdout);
    const rot = await runCli(["keys", "rotate"], env);
    expect(rot.code, rot.stderr).toBe(0);
    const after = await signedBarrier(1);
    const keysJson = await runCli(["keys", "public", "--json"], env);
    const doc = JSON.parse(keysJson.stdout);
    expect(doc.keys).toHaveLength(2);
    expect(doc.keys.filter((k: { current: boolean }) => k.current)).toHaveLength(1);
    const keysFile = file("keys.json", keysJson.stdout);
    const oldEnv = file("before.dsse.json", await downloadEnvelope(before, 1));
    const newEnv = file("after.dsse.json", await downloadEnvelope(after, 1));
    expect(JSON.parse(readFileSync(newEnv, "utf8")).signatures[0].keyid).toBe(doc.keys.find((k: { current: boolean }) => k.current).keyid);
    const both = await runCli(["verify", oldEnv, newEnv, "--keys", keysFile], env);
    // Two different barriers: the signatures verify, the "chain" across them does not exist.
    expect(both.stdout.match(/signature valid/g)).toHaveLength(2);
    expect((await runCli(["verify", oldEnv, "--keys", keysFile], env)).code).toBe(0);
    expect((await runCli(["verify", newEnv, "--keys", keysFile], env)).code).toBe(0);
    expect((await runCli(["verify", newEnv, "--key", oldPem], env)).code).toBe(5);
    // --keys-url: the same document fetched over HTTP (as served at /.well-known/quiesce/keys.json).
    const http = await import("node:http");
    const srv = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(keysJson.stdout);
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(srv.address() as import("node:net").AddressInfo).port}/.well-known/quiesce/keys.json`;
      const viaUrl = await runCli(["verify", oldEnv, "--keys-url", url], env);
      expect(viaUrl.code, viaUrl.stderr).toBe(0);
    } finally {
      await new Promise((r) => srv.close(r));
    }
    // The server-side check on the receipt page still accepts the old one.
    expect((await getConsoleReceipt(team.users.viewer.principal, before, 1))!.signature.valid).toBe(true);
  }, 120_000);
});
