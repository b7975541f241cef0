// `npm start`'s preparation, in a short-lived process of its own: migrations, the demo data, the
// receipt-signing key. Why a process: these load Prisma, the generated client and the seed, some 100 MB
// that the supervisor (which then only watches its children for hours) would otherwise keep for good
// (docs/design/process-layout.md). Protocol over IPC: sends { type: "ready", keys, keysFile } or
// { type: "error", message }; prints its own progress lines (prefixed like the supervisor's).
import { migrate } from "../platform/db/migrate";
import { seedDemo } from "../seed/index";
import { formatSeedReport } from "../seed/report";
import { closeDbClients } from "./database";
import { ensureSigningKey } from "../platform/signing/keystore";
import { setting } from "../platform/config";

export interface PrepareResult {
  type: "ready";
  keys: Record<string, string>;
  keysFile: string;
}

const say = (line: string) => console.log(`${"[start]".padEnd(16)} ${line}`);
const send = (m: unknown) => new Promise<void>((r) => (process.send ? process.send(m, () => r()) : r()));

try {
  const url = setting("DATABASE_URL");
  if (!url) throw new Error("DATABASE_URL is not set");
  const m = await migrate(url, (l) => say(l));
  say(m.applied.length ? `${m.applied.length} migration(s) applied` : `migrations up to date (${m.alreadyApplied})`);
  const seeded = await seedDemo();
  const port = setting("PORT");
  for (const line of formatSeedReport(seeded, { consoleUrl: `http://localhost:${port}` })) console.log(line);
  await closeDbClients();
  // The receipt-signing key exists before anything can issue a receipt (generated on the first start).
  say(`receipt-signing key ${ensureSigningKey()}`);
  const result: PrepareResult = {
    type: "ready",
    keys: Object.fromEntries(seeded.keys.map((k) => [k.role, k.secret])),
    keysFile: seeded.keysFile,
  };
  await send(result);
  process.exit(0);
} catch (err) {
  await send({ type: "error", message: (err as Error).message ?? String(err) });
  process.exit(1);
}
