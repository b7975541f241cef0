// "30d", "12h", "90m", "45s", "2w" → milliseconds, for flags such as `keys create --expires-in`.
import { UsageError } from "./args";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

export function parseDuration(text: string, flag: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m) throw new UsageError(`--${flag}: expected a duration like 30d, 12h, 90m, 45s or 2w, got "${text}"`);
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms <= 0) throw new UsageError(`--${flag}: must be longer than zero`);
  return ms;
}
