// `--filter key=value` flags of `quiesce stop` → the API's stop filter (docs/fleet-stop.md), checked
// with the same zod schema the route parses with. Lists are comma-separated; keys may repeat.
import { StopFilterSchema, type StopFilterInput } from "../schemas/stops";
import { UsageError } from "./args";

const KEYS: Record<string, keyof StopFilterInput> = {
  harness: "harness",
  agent: "agent",
  task: "taskPrefix",
  "task-prefix": "taskPrefix",
  "created-after": "createdAfter",
  "created-before": "createdBefore",
  status: "status",
  run: "runIds",
  runs: "runIds",
  "run-ids": "runIds",
};
const LISTS = new Set<keyof StopFilterInput>(["harness", "agent", "status", "runIds"]);

export function parseStopFilter(flags: readonly string[]): StopFilterInput {
  const raw: Record<string, unknown> = {};
  for (const f of flags) {
    const eq = f.indexOf("=");
    if (eq <= 0) throw new UsageError(`--filter ${f}: expected key=value (keys: ${Object.keys(KEYS).join(", ")})`);
    const key = KEYS[f.slice(0, eq).trim()];
    if (!key) throw new UsageError(`--filter ${f}: unknown key "${f.slice(0, eq)}" (keys: ${Object.keys(KEYS).join(", ")})`);
    const value = f.slice(eq + 1).trim();
    if (LISTS.has(key))
      raw[key] = [
        ...((raw[key] as string[] | undefined) ?? []),
        ...value
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean),
      ];
    else if (raw[key] !== undefined) throw new UsageError(`--filter ${f}: ${f.slice(0, eq)} given twice`);
    else raw[key] = value;
  }
  const parsed = StopFilterSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new UsageError(`--filter ${i.path.join(".")}: ${i.message}`);
  }
  return parsed.data;
}
