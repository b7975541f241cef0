// `quiesce verify <file…> [--key pub.pem]… [--keys keys.json] [--keys-url URL] [--digest-only]`:
// verifies signed stop receipts offline — signature, key id, digest, and the version chain when given
// several versions. Exit codes per failure kind: 3 digest, 4 signature (or unsigned), 5 unknown key,
// 6 version chain, 7 not a receipt/envelope; 2 bad usage or an unreadable file.
import { readFileSync } from "node:fs";
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { itemsOf, trustedKeys, verifyReceipts, EXIT_CODES } from "../../lib/modules/stop";

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: not JSON (${(e as Error).message})`);
  }
}

export const verifyCommand: Command = {
  summary: "verify signed stop receipts offline: signature, key id, digest, version chain",
  usage:
    "npm run quiesce -- verify <receipt.dsse.json|receipt.json>… (--key pub.pem [--key …] | --keys keys.json | --keys-url <url> | --digest-only)\n" +
    "  exit: 0 verified, 3 digest, 4 signature/unsigned, 5 unknown key, 6 version chain, 7 not a receipt, 2 usage",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      key: { type: "string", multiple: true },
      keys: { type: "string" },
      "keys-url": { type: "string" },
      "digest-only": { type: "boolean" },
    });
    if (!positionals.length) throw new UsageError("give one or more receipt or envelope files");
    const pems = (values.key ?? []).map((f) => {
      try {
        return readFileSync(f, "utf8");
      } catch (e) {
        throw new UsageError(`--key ${f}: cannot read (${(e as NodeJS.ErrnoException).code})`);
      }
    });
    const haveKeys = pems.length > 0 || values.keys !== undefined || values["keys-url"] !== undefined;
    if (!haveKeys && !values["digest-only"])
      throw new UsageError("give --key <pub.pem>, --keys <keys.json> or --keys-url <url> (or --digest-only to skip the signature)");
    if (haveKeys && values["digest-only"]) throw new UsageError("--digest-only and a key: choose one");
    let keysJson: unknown;
    if (values.keys) keysJson = readJson(values.keys);
    if (values["keys-url"]) {
      const u = values["keys-url"];
      if (!/^https?:\/\//.test(u)) throw new UsageError("--keys-url: an http(s) URL");
      const res = await fetch(u, { signal: AbortSignal.timeout(10_000) }).catch((e: Error) => {
        throw new UsageError(`--keys-url: ${e.message}`);
      });
      if (!res.ok) throw new UsageError(`--keys-url: HTTP ${res.status}`);
      keysJson = await res.json();
    }
    let keys = null;
    if (haveKeys) {
      try {
        keys = trustedKeys({ pems, keysJson });
      } catch (e) {
        throw new UsageError(`keys: ${(e as Error).message}`);
      }
    }
    const items = positionals.flatMap((f) => itemsOf(f, readJson(f)));
    const report = verifyReceipts(items, keys);
    for (const r of report.receipts) {
      console.log(
        `ok  ${r.source}: receipt ${r.barrierId} v${r.version} digest sha256:${r.digest}${r.keyId ? `, signature valid (key ${r.keyId})` : ", signature NOT checked (--digest-only)"}`,
      );
    }
    if (report.receipts.length > 1 && !report.failures.some((f) => f.kind === "chain"))
      console.log(
        `ok  version chain v${report.receipts
          .map((r) => r.version)
          .sort((a, b) => a - b)
          .join(" → v")} is unbroken`,
      );
    for (const f of report.failures) console.error(`FAIL (${f.kind}) ${f.source}: ${f.detail}`);
    if (!report.ok)
      console.error(
        `verification failed (exit ${report.exitCode}: ${Object.entries(EXIT_CODES)
          .filter(([, c]) => c === report.exitCode)
          .map(([k]) => k)
          .join("/")})`,
      );
    return report.exitCode;
  },
};
