// `quiesce exec [flags] -- <command…>`: runs a command under a supervisor (docs/environment.md).
// It registers the run (or attaches to a session's run), starts the command in a container of its own
// (lib/agent/supervisor), and follows the run's control events — its own, its ancestors' and the matching
// fleet stops' (GET /runs/{id}/control, the gate's rule): pause freezes the whole process tree, resume
// (or lifting the fleet pause) thaws it, kill empties it — SIGTERM, the grace period, SIGKILL until the container is empty — and
// reports `process_terminated` with the evidence (or `unknown`, naming what could not be killed).
// `--reattach <runId>` takes over a tree a dead supervisor left and reports its evidence exactly once.
import os from "node:os";
import path from "node:path";
import type { Command } from "../../lib/cli/command";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { API_FLAGS, callApi, defaultUrl } from "../../lib/cli/api";
import { QuiesceApiError, QuiesceClient } from "../../lib/agent/sdk/client";
import { QuiesceConfigError } from "../../lib/agent/sdk/errors";
import { adapterConfig, AdapterConfigError } from "../../lib/agent/adapters/common/config";
import { setting } from "../../lib/platform/config";
import { detect, MECHANISMS, type Mechanism } from "../../lib/agent/supervisor/container";
import { Supervisor } from "../../lib/agent/supervisor/supervisor";
import { environmentMeaning, type EnvironmentEvidence } from "../../lib/control/evidence/environment";
import type { RunControl } from "../../lib/control/fleet";
import { killNames } from "../../lib/agent/abort/control-event";
import { claudeSession } from "../../lib/cli/claude-session";
import { backoffDelay, sleep } from "../../lib/platform/wait";

const HARNESSES = ["claude_code", "codex", "mcp", "custom"] as const;
type Harness = (typeof HARNESSES)[number];

const USAGE =
  "npm run quiesce -- exec [--task <id>] [--parent <runId> --parent-lease <leaseId>] [--session <id>] " +
  "[--harness claude_code|codex|mcp|custom] [--grace <seconds>] [--mechanism cgroup2|cgroup1|pidns|pgroup] " +
  "[--state-dir <dir>] [--url <url>] [--key <agent key>] -- <command…>\n" +
  "       npm run quiesce -- exec --reattach <runId> [--grace <seconds>] [--state-dir <dir>]";

const FLAGS = {
  ...API_FLAGS,
  task: { type: "string" },
  parent: { type: "string" },
  "parent-lease": { type: "string" },
  session: { type: "string" },
  harness: { type: "string" },
  grace: { type: "string" },
  mechanism: { type: "string" },
  "state-dir": { type: "string" },
  reattach: { type: "string" },
} as const;

/**
 * exec starts harnesses, so it finds the control plane as the adapters do (managed config, then flags,
 * then a key file before a key in the environment), with the CLI's local default URL.
 */
function execClient(values: { url?: string; key?: string }): QuiesceClient {
  try {
    const cfg = adapterConfig({ url: values.url ?? setting("QUIESCE_URL") ?? defaultUrl(), key: values.key });
    return new QuiesceClient({ url: cfg.url, apiKey: cfg.apiKey, timeoutMs: setting("QUIESCE_TIMEOUT_MS") });
  } catch (err) {
    if (err instanceof AdapterConfigError || err instanceof QuiesceConfigError) throw new UsageError(err.message);
    throw err;
  }
}

function stateDirOf(v: string | undefined): string {
  return v ?? path.join(process.env.XDG_STATE_HOME ?? path.join(os.homedir(), ".local/state"), "quiesce/exec");
}

function graceMsOf(v: string | undefined): number {
  if (v === undefined) return 5000;
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v.trim()) || !Number.isFinite(n) || n > 3600)
    throw new UsageError(`--grace: seconds from 0 to 3600, got "${v}"`);
  return Math.round(n * 1000);
}

function log(msg: string): void {
  process.stderr.write(`[quiesce exec] ${msg}\n`);
}

// How long a tree emptied for a fleet kill waits for the stop's fan-out to give its run a barrier.
const BARRIER_WAIT_MS = 120_000;

/**
 * Reports the evidence, retrying while the control plane is unreachable; true once recorded. With
 * `barrierWaitMs`, a refusal because no barrier covers the run yet (a fleet kill's barrier is started by
 * the barrier engine after the scope commits) is retried that long too.
 */
async function report(
  client: QuiesceClient,
  runId: string,
  leaseId: string | undefined,
  ev: EnvironmentEvidence,
  barrierWaitMs = 0,
): Promise<boolean> {
  const meaning = environmentMeaning(ev);
  const waitUntil = Date.now() + barrierWaitMs;
  for (let i = 0, unreachable = 0; unreachable < 8; i++) {
    try {
      await client.reportObserved(runId, { meaning, evidence: { environment: ev }, ...(leaseId ? { leaseId } : {}) });
      log(`${runId}: reported ${meaning} (${ev.processes.length} processes, mechanism ${ev.mechanism})`);
      return true;
    } catch (err) {
      if (err instanceof QuiesceApiError && err.status === 409 && Date.now() < waitUntil) {
        if (i === 0) log(`${runId}: waiting for the fleet stop's barrier to report the evidence`);
        await sleep(backoffDelay(i, { baseMs: 100, capMs: 1000 }));
        continue;
      }
      if (err instanceof QuiesceApiError && err.status < 500) {
        log(`${runId}: the control plane refused the evidence: ${err.message}`);
        return false;
      }
      await sleep(backoffDelay(unreachable++, { baseMs: 200, capMs: 5000 }));
    }
  }
  log(`${runId}: could not report the evidence (control plane unreachable); \`quiesce exec --reattach ${runId}\` reports it later`);
  return false;
}

async function reattach(values: { grace?: string; "state-dir"?: string; url?: string; key?: string }, runId: string): Promise<number> {
  const graceMs = graceMsOf(values.grace);
  const files = Supervisor.findLeft(runId, stateDirOf(values["state-dir"]));
  if (files.length === 0) throw new UsageError(`no container left by a supervisor of ${runId} (nothing to reattach, or already reported)`);
  const client = execClient(values);
  let ok = true;
  for (const f of files) {
    const sup = Supervisor.reattach(f);
    const ev = await sup.kill(graceMs);
    if (await report(client, runId, sup.meta.leaseId as string | undefined, ev)) sup.markReported();
    else ok = false;
  }
  return ok ? 0 : 1;
}

export const execCommand: Command = {
  summary: "run a command under a supervisor: pause freezes its whole process tree, kill empties it and reports the evidence",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, FLAGS);
    if (values.reattach !== undefined) {
      if (positionals.length) throw new UsageError("--reattach takes no command");
      return callApi(() => reattach(values, values.reattach!.trim()));
    }
    if (positionals.length === 0) throw new UsageError("no command: put it after `--`, e.g. `quiesce exec -- claude -p …`");
    // `quiesce exec -- claude …`: the run is the session's, the one its Claude Code hook registers too.
    const claude = path.basename(positionals[0]!) === "claude" && values.session === undefined ? claudeSession(positionals.slice(1)) : null;
    const command = claude ? [positionals[0]!, ...claude.args] : positionals;
    const session = claude ? (claude.sessionId ?? undefined) : values.session;
    const harness = (values.harness ?? (claude ? "claude_code" : "custom")) as Harness;
    if (!HARNESSES.includes(harness)) throw new UsageError(`--harness: one of ${HARNESSES.join(", ")}, got "${values.harness}"`);
    if (values.mechanism !== undefined && !MECHANISMS.includes(values.mechanism as Mechanism))
      throw new UsageError(`--mechanism: one of ${MECHANISMS.join(", ")}, got "${values.mechanism}"`);
    if ((values.parent === undefined) !== (values["parent-lease"] === undefined))
      throw new UsageError("--parent and --parent-lease go together (a child run needs its parent's lease)");
    const graceMs = graceMsOf(values.grace);
    const client = execClient(values);
    let detected;
    try {
      detected = detect(values.mechanism as Mechanism | undefined);
    } catch (err) {
      throw new UsageError(`--mechanism: ${(err as Error).message}`);
    }

    return callApi(async () => {
      const reg = await client.createRun({
        taskId: values.task ?? `exec:${path.basename(command[0]!)}`,
        title: `quiesce exec ${command.join(" ").slice(0, 200)}`,
        harness,
        ...(values.parent ? { parentRunId: values.parent, parentLeaseId: values["parent-lease"] } : {}),
        ...(session ? { native: { sessionId: session } } : {}),
      });
      const runId = reg.runId;
      const leaseId = reg.leaseId;
      // The gate's rule, read from the control plane: the run's and its ancestors' lifecycles and the
      // matching fleet stops.
      const effective = async (): Promise<RunControl> => (await client.getRunControl(runId)).control;
      if ((await effective()) === "killed") {
        console.error(`${runId} is already killed: nothing started`);
        return 2;
      }

      // Listen first: a command nobody could stop is never started (fail closed).
      const stop = new AbortController();
      let wake: () => void = () => undefined;
      let killNamed = false;
      await client.subscribe(
        runId,
        (e) => {
          if (e.type === "control" && killNames(e.data, runId)) killNamed = true;
          if (e.type === "control" || e.type === "resync") wake();
        },
        stop.signal,
      );

      // Mark the run supervised before anything starts (docs/environment.md): from here on, a receipt of a
      // stop covering it waits for this supervisor's evidence. A kill that committed first refuses the mark.
      try {
        await client.reportEnvironment(runId, { mechanism: detected.mechanism, graceMs, leaseId });
      } catch (err) {
        if (err instanceof QuiesceApiError && err.status === 409) {
          stop.abort();
          console.error(`${runId}: ${err.message}: nothing started`);
          return 2;
        }
        throw err;
      }
      // The container's live status, for the run page: best effort (the stop's evidence is what counts).
      const status = (frozen: boolean, live: number) =>
        client
          .reportEnvironment(runId, {
            mechanism: detected.mechanism,
            graceMs,
            leaseId,
            container: sup.container.handle.name,
            liveProcesses: live,
            frozen,
          })
          .catch((err: Error) => log(`${runId}: could not report the container's status (${err.message})`));

      const sup = await Supervisor.start(
        command,
        {
          runId,
          stateDir: stateDirOf(values["state-dir"]),
          mechanism: detected.mechanism,
          env: { ...process.env, QUIESCE_RUN_ID: runId, QUIESCE_LEASE_ID: leaseId, QUIESCE_EPOCH: String(reg.epoch) },
          meta: { leaseId, url: client.url },
        },
        detected,
      );
      log(
        `${runId}: ${command[0]} started in a ${sup.mechanism} container${detected.mechanism === "pgroup" ? " (the weakest mechanism)" : ""}`,
      );
      void status(false, sup.liveCount());

      // One reconciliation at a time; a wake-up during one runs another after it.
      let running = false;
      let again = false;
      let paused = false;
      let killed: Promise<number> | null = null;
      let resolveDone!: (code: number) => void;
      const done = new Promise<number>((r) => (resolveDone = r));
      const doKill = async (): Promise<number> => {
        stop.abort();
        const ev = await sup.kill(graceMs);
        // A fleet kill's barrier comes after the scope (its fan-out); a single kill's commits with it.
        const ok = await report(client, runId, leaseId, ev, BARRIER_WAIT_MS);
        if (ok) sup.markReported();
        return ok && environmentMeaning(ev) === "process_terminated" ? 137 : 1;
      };
      const reconcile = async () => {
        if (running) {
          again = true;
          return;
        }
        running = true;
        try {
          do {
            again = false;
            if (killed) return;
            let state: RunControl;
            try {
              state = killNamed ? "killed" : await effective();
            } catch (err) {
              log(`${runId}: could not read the run's state (${(err as Error).message}); asking again on the next event`);
              continue;
            }
            if (state === "killed") {
              killed = doKill();
              resolveDone(await killed);
              return;
            }
            if (state === "paused" && !paused) {
              const p = await sup.pause();
              paused = true;
              log(`${runId}: paused — ${p.members} processes frozen (${p.mechanism})`);
              void status(true, p.members);
            } else if (state === "normal" && paused) {
              await sup.resume();
              paused = false;
              log(`${runId}: resumed — thawed`);
              void status(false, sup.liveCount());
            }
          } while (again);
        } finally {
          running = false;
        }
      };
      wake = () => void reconcile();
      await reconcile();
      const forward = (sig: NodeJS.Signals) => () => {
        // An operator's Ctrl-C ends the command, not the supervision: the tree is emptied either way.
        if (!killed) sup.container.signalAll(sig);
      };
      process.on("SIGINT", forward("SIGINT"));
      process.on("SIGTERM", forward("SIGTERM"));

      void sup.exited.then(async (exit) => {
        if (killed) return;
        // The command ended on its own: the environment ends with it (what it left behind is stopped too).
        const left = sup.liveCount();
        if (left > 0) {
          log(`${runId}: the command ended; stopping ${left} processes it left behind`);
          await sup.kill(graceMs);
        }
        await sup.finish();
        stop.abort();
        try {
          await client.finish(runId, { leaseId });
        } catch (err) {
          log(`${runId}: could not mark the run finished (${(err as Error).message})`);
        }
        resolveDone(exit.code ?? 128 + (exit.signal ? (os.constants.signals[exit.signal] ?? 0) : 0));
      });
      return done;
    });
  },
};
