// `quiesce together <command> [flags…] [+ <command> [flags…]]…`: several long-running commands in ONE
// process (each Node process costs some 40 MB before it does any work). `npm start` runs the barrier
// engine with the webhook worker, and the provider simulator with the demo fleet, this way
// (lib/start/plan.ts#GROUPS says why these). SIGTERM/SIGINT reach every member (each stops as it
// would alone); the database clients are closed once, after the last member. A member that ends on its
// own while the others run ends the whole process with its failure, so the supervisor reports it:
// never a process that is half running.
import type { Command } from "./types";
import { UsageError } from "../../lib/cli/args";
import { closeDbClients, holdDbClients } from "../../lib/start/database";
import { COMMAND_NAMES, type CommandName } from "./names";

/** Commands that run until stopped and may share a process (loaded here, not through ./index: no cycle). */
const LOADERS = {
  "barrier-worker": () => import("./barrier-worker").then((m) => m.barrierWorkerCommand),
  "webhook-worker": () => import("./webhook-worker").then((m) => m.webhookWorkerCommand),
  "provider-sim": () => import("./provider-sim").then((m) => m.providerSimCommand),
  demo: () => import("./demo").then((m) => m.demoCommand),
  api: () => import("./api").then((m) => m.apiCommand),
} satisfies Partial<Record<CommandName, () => Promise<Command>>>;
export const TOGETHER_COMMANDS = Object.keys(LOADERS) as (keyof typeof LOADERS)[];

export function splitMembers(argv: string[]): { name: string; args: string[] }[] {
  const members: { name: string; args: string[] }[] = [];
  let current: string[] = [];
  for (const a of [...argv, "+"]) {
    if (a !== "+") {
      current.push(a);
      continue;
    }
    const [name, ...args] = current;
    if (!name) throw new UsageError("an empty member: write `<command> [flags] + <command> [flags]`");
    if (!(TOGETHER_COMMANDS as readonly string[]).includes(name)) {
      throw new UsageError(
        `${(COMMAND_NAMES as readonly string[]).includes(name) ? "not a long-running command" : "unknown command"}: ${name} (one of ${TOGETHER_COMMANDS.join(", ")})`,
      );
    }
    if (members.some((m) => m.name === name)) throw new UsageError(`${name} given twice`);
    members.push({ name, args });
    current = [];
  }
  if (members.length < 2) throw new UsageError("at least two commands, separated by +");
  return members;
}

export const togetherCommand: Command = {
  summary: "run several long-running commands (workers, simulators) in one process",
  usage: `npm run quiesce -- together <command> [flags] + <command> [flags] …   (commands: ${TOGETHER_COMMANDS.join(", ")})`,
  async run(argv) {
    const members = splitMembers(argv);
    const loaded = await Promise.all(members.map(async (m) => ({ ...m, command: await LOADERS[m.name as keyof typeof LOADERS]() })));
    let stopping = false;
    const onStop = () => {
      stopping = true;
    };
    process.once("SIGTERM", onStop);
    process.once("SIGINT", onStop);
    holdDbClients(true);
    let failed = 0;
    try {
      await Promise.all(
        loaded.map(async (m) => {
          let code: number;
          try {
            code = await m.command.run(m.args);
          } catch (err) {
            console.error(`[${m.name}] error: ${(err as Error).message ?? err}`);
            code = err instanceof UsageError ? 2 : 1;
          }
          if (code !== 0) failed ||= code;
          if (!stopping) {
            // Ended on its own: stop the others too (they listen for SIGTERM), and exit with a failure.
            console.error(`[together] ${m.name} ended (exit code ${code}) while the others ran; stopping them`);
            failed ||= 1;
            stopping = true;
            process.kill(process.pid, "SIGTERM");
          }
        }),
      );
    } finally {
      holdDbClients(false);
      await closeDbClients();
    }
    return failed;
  },
};
