// The environment a run executed in, as its supervisor (`quiesce exec`) reports it
// (docs/environment.md, docs/evidence.md#the-environment): which container mechanism held
// the process tree, every process seen with its command line and how it ended, and when the container
// was last seen empty. Pure: the supervisor builds it, the server reads it; neither trusts more than it says.

export const ENVIRONMENT_MECHANISMS = ["cgroup2", "cgroup1", "pidns", "pgroup"] as const;
export type EnvironmentMechanism = (typeof ENVIRONMENT_MECHANISMS)[number];

/** How much a mechanism's "empty" proves. */
export const MECHANISM_TEXT: Record<EnvironmentMechanism, string> = {
  cgroup2: "a cgroup v2 group (the kernel keeps every descendant in it)",
  cgroup1: "cgroup v1 freezer and pids groups (the kernel keeps every descendant in them)",
  pidns: "a PID namespace (every descendant is in it; its init's death ends them all)",
  pgroup:
    "a process group and a /proc scan (weakest: a process that leaves the session, is orphaned and clears its environment is not seen)",
};

/** How a process seen in the container ended, as far as the supervisor could observe it. */
export type ProcessEnd =
  /** gone before the stop began (it finished on its own) */
  | "exited"
  /** gone after SIGTERM, before SIGKILL was sent */
  | "after_sigterm"
  /** gone after SIGKILL */
  | "after_sigkill"
  /** still there when the supervisor gave up: not ended */
  | "not_ended";

export interface ProcessRecord {
  pid: number;
  cmdline: string;
  firstSeenAt: string;
  endedAt: string | null;
  ended: ProcessEnd;
  /** Exit status, known only for the supervisor's own child (the others are reaped by someone else). */
  exitCode?: number | null;
  signal?: string | null;
}

export interface EnvironmentEvidence {
  kind: "environment";
  mechanism: EnvironmentMechanism;
  /** True for the weakest mechanism, so the receipt can say so. */
  weakest: boolean;
  container: string;
  graceMs: number;
  stopStartedAt: string;
  /** The last time the container was read and held no live process; null if it never was. */
  emptyAt: string | null;
  processes: ProcessRecord[];
  /** pids of processes still alive at the end (could not be killed: D state, another namespace …). */
  survivors: number[];
  /** The supervisor that reported it was a new one, reattached after the first one died. */
  reattached: boolean;
}

/** What the acknowledgment may say: process_terminated only for a container verified empty. */
export function environmentMeaning(e: EnvironmentEvidence): "process_terminated" | "unknown" {
  return e.emptyAt !== null && e.survivors.length === 0 && e.processes.every((p) => p.ended !== "not_ended")
    ? "process_terminated"
    : "unknown";
}

/** Reads an acknowledgment's evidence as environment evidence, or null when it is not one (never guessed). */
export function asEnvironmentEvidence(x: unknown): EnvironmentEvidence | null {
  if (!x || typeof x !== "object") return null;
  const e = x as Partial<EnvironmentEvidence>;
  if (e.kind !== "environment" || !ENVIRONMENT_MECHANISMS.includes(e.mechanism as EnvironmentMechanism)) return null;
  if (!Array.isArray(e.processes) || !Array.isArray(e.survivors) || typeof e.container !== "string") return null;
  if (e.emptyAt !== null && typeof e.emptyAt !== "string") return null;
  return e as EnvironmentEvidence;
}

/** One line for the ladder: "7 processes ended, container (cgroup2) empty at …". */
export function describeEnvironment(e: EnvironmentEvidence, when: (d: Date) => string): string {
  const n = e.processes.length;
  const noun = n === 1 ? "process" : "processes";
  const how = e.weakest ? ` — ${MECHANISM_TEXT[e.mechanism]}` : "";
  if (environmentMeaning(e) === "process_terminated")
    return `environment terminated: ${n} ${noun} ended, container (${e.mechanism}) empty at ${when(new Date(e.emptyAt!))}${how}`;
  const left = e.survivors.length;
  return `environment not verified empty: ${left} of ${n} ${noun} could not be ended (pids ${e.survivors.join(", ") || "unknown"}), container (${e.mechanism})${how}`;
}

export const UNSUPERVISED_SENTENCE = "environment not observed: this run had no supervisor; nothing is claimed about its processes";

/** One run of a stopped subtree, as far as its environment goes. */
export interface RunEnvironmentFact {
  runId: string;
  /** The run was started under a supervisor (`quiesce exec`). */
  supervised: boolean;
  /** The supervisor's latest environment report after the stop, if any. */
  evidence: EnvironmentEvidence | null;
  /** A person (the unknown's owner, or a manager/admin) checked the machine and found the tree gone. */
  attested?: { by: string; at: string; evidence: string } | null;
}

export interface EnvironmentVerdict {
  /** done: every supervised run verified empty; pending: waiting for a supervisor within the quiet period; uncertain: cannot become true by waiting. */
  status: "done" | "pending" | "uncertain" | "not_observed";
  /** Whether the completion rule may say stopped_and_quiet as far as the environment goes. */
  allowsQuiet: boolean;
  /** Runs that need a reconciliation: a supervisor that did not answer in time, or a tree it could not empty. */
  unknownRuns: { runId: string; why: string }[];
  sentences: string[];
}

/**
 * The environment rung and its part of the completion rule (docs/evidence.md#the-environment): every
 * supervised run of the subtree needs a verified-empty environment; a supervised run whose supervisor
 * did not answer within the quiet period is unknown; an unsupervised run is claimed nothing about.
 */
export function deriveEnvironment(runs: RunEnvironmentFact[], quietOver: boolean, when: (d: Date) => string): EnvironmentVerdict {
  const sentences: string[] = [];
  const unknownRuns: EnvironmentVerdict["unknownRuns"] = [];
  let pending = false;
  let supervised = 0;
  for (const r of runs) {
    if (!r.supervised) {
      sentences.push(`${r.runId}: ${UNSUPERVISED_SENTENCE}`);
      continue;
    }
    supervised++;
    if (r.attested && !(r.evidence && environmentMeaning(r.evidence) === "process_terminated")) {
      // Like a person's resolution of an unknown call: their word, named, with their note — not the supervisor's proof.
      sentences.push(
        `${r.runId}: environment verified empty by ${r.attested.by} on ${when(new Date(r.attested.at))} (a person's check: “${r.attested.evidence}”), not by its supervisor`,
      );
    } else if (r.evidence) {
      sentences.push(`${r.runId}: ${describeEnvironment(r.evidence, when)}`);
      if (environmentMeaning(r.evidence) === "unknown")
        unknownRuns.push({ runId: r.runId, why: `its supervisor could not end ${r.evidence.survivors.length} process(es)` });
    } else if (quietOver) {
      sentences.push(`${r.runId}: environment unknown: its supervisor did not report within the quiet period`);
      unknownRuns.push({ runId: r.runId, why: "its supervisor did not report within the quiet period" });
    } else {
      sentences.push(`${r.runId}: environment pending: waiting for its supervisor's report`);
      pending = true;
    }
  }
  const status: EnvironmentVerdict["status"] =
    supervised === 0 ? "not_observed" : unknownRuns.length ? "uncertain" : pending ? "pending" : "done";
  return { status, allowsQuiet: status === "done" || status === "not_observed", unknownRuns, sentences };
}

/** How long after a supervisor's grace its report is still waited for (SIGKILL is immediate; this is its round trip). */
export const SUPERVISOR_REPORT_MARGIN_MS = 3000;

/**
 * The quiet period a barrier needs for its supervised runs: the longest grace among them plus the
 * margin, so a supervisor that ends its tree as configured reports within it (docs/evidence.md#the-quiet-period).
 * 0 with no supervised run.
 */
export function supervisedQuietSeconds(maxGraceMs: number | null): number {
  return maxGraceMs === null ? 0 : (maxGraceMs + SUPERVISOR_REPORT_MARGIN_MS) / 1000;
}
