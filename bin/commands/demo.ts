// `quiesce demo`: the live demo fleet (lib/demo/fleet.ts) — simulated release agents playing seed
// 001's story against the control plane, so a new user sees live run trees at once. `npm start`
// runs it unless --no-demo or QUIESCE_DEMO=0. Reads QUIESCE_URL and QUIESCE_API_KEY (the demo agent
// key; .quiesce/demo-keys.json is the fallback), QUIESCE_WORKER_KEY for its queue workers, and
// QUIESCE_PROVIDER_SIM_URL for the simulated deployment provider (default http://127.0.0.1:$QUIESCE_PROVIDER_SIM_PORT, 4700).
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { defaultUrl } from "../../lib/cli/api";
import { readDemoKeys } from "../../lib/seed/demo-keys-file";
import { simProviderUrl } from "../../lib/seed/sim-url";
import { runFleet } from "../../lib/demo/fleet";
import { setting } from "../../lib/platform/config";

const positiveInt = (v: string | undefined, name: string, fallback: number, min = 1) => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: an integer ≥ ${min}`);
  return n;
};

export const demoCommand: Command = {
  summary: "run the live demo fleet: simulated release agents with previews, queued checks, subagents and retries",
  usage:
    "npm run quiesce -- demo [--url <control plane>] [--key <agent key>] [--worker-key <key>] [--sim <provider-sim url>]\n" +
    "  [--max-live 4] [--initial 2] [--every 20-40 (seconds)]\n" +
    "  env: QUIESCE_URL, QUIESCE_API_KEY (agent key), QUIESCE_WORKER_KEY, QUIESCE_PROVIDER_SIM_URL, DATABASE_URL (its pg-boss queue)",
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        url: { type: "string" },
        key: { type: "string" },
        "worker-key": { type: "string" },
        sim: { type: "string" },
        "max-live": { type: "string" },
        initial: { type: "string" },
        every: { type: "string" },
      },
      { positionals: false },
    );
    const m = /^(\d+)(?:-(\d+))?$/.exec(values.every ?? "20-40");
    if (!m) throw new UsageError("--every: seconds, e.g. 30 or 20-40");
    const lo = Number(m[1]) * 1000,
      hi = Number(m[2] ?? m[1]) * 1000;
    if (lo < 1000 || hi < lo) throw new UsageError("--every: at least 1 second, low-high with low ≤ high");
    const maxLive = positiveInt(values["max-live"], "max-live", 4);
    const initial = positiveInt(values.initial, "initial", 2, 0);
    const file = readDemoKeys();
    const agentKey = values.key ?? setting("QUIESCE_API_KEY") ?? file?.keys.agent?.secret;
    if (!agentKey)
      throw new UsageError("no agent key: set QUIESCE_API_KEY or pass --key (npm start writes the demo keys to .quiesce/demo-keys.json)");
    const workerKey = values["worker-key"] ?? setting("QUIESCE_WORKER_KEY") ?? file?.keys.worker?.secret ?? agentKey;
    const url = values.url ?? defaultUrl();
    const simUrl = values.sim ?? setting("QUIESCE_PROVIDER_SIM_URL") ?? simProviderUrl();
    for (const [name, u] of [
      ["url", url],
      ["sim", simUrl],
    ] as const) {
      try {
        new URL(u);
      } catch {
        throw new UsageError(`--${name}: not a URL: "${u}"`);
      }
    }

    const ac = new AbortController();
    process.once("SIGTERM", () => ac.abort());
    process.once("SIGINT", () => ac.abort());
    await runFleet({
      url,
      agentKey,
      workerKey,
      simUrl,
      signal: ac.signal,
      intervalMs: [lo, hi],
      maxLive,
      initial,
    });
    return 0;
  },
};
