// .quiesce/demo-keys.json: the demo secrets printed on the first start, kept (mode 0600, git-ignored)
// so later starts can hand the same keys to the demo fleet and the developer can look them up again.
// The database holds only hashes, so this file is the one place these secrets exist.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { setting } from "../platform/config";

export const DEMO_KEY_ROLES = ["agent", "worker", "gateway", "operator", "otherAgent"] as const;
export type DemoKeyRole = (typeof DEMO_KEY_ROLES)[number];

const DemoKeysFile = z.object({
  team: z.string(),
  keys: z.partialRecord(z.enum(DEMO_KEY_ROLES), z.object({ id: z.string(), secret: z.string() })),
  users: z.array(z.object({ email: z.string(), role: z.string() })).default([]),
  password: z.string().nullable().default(null),
  updatedAt: z.string().optional(),
});
export type DemoKeys = z.infer<typeof DemoKeysFile>;

export function defaultDemoKeysPath(): string {
  return path.resolve(setting("QUIESCE_DATA_DIR"), "demo-keys.json");
}

/** null when the file is missing or unreadable: the seed then issues fresh keys. */
export function readDemoKeys(file = defaultDemoKeysPath()): DemoKeys | null {
  if (!existsSync(file)) return null;
  try {
    const parsed = DemoKeysFile.safeParse(JSON.parse(readFileSync(file, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeDemoKeys(data: DemoKeys, file = defaultDemoKeysPath()): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...data, updatedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync keeps an existing file's mode
}
