// The shape of one `npm run quiesce -- <command>`; bin/commands/* implement it.
export interface Command {
  /** One line for `quiesce help`. */
  summary: string;
  /** Usage text shown by `quiesce help <name>` and after a usage error. */
  usage: string;
  /** Returns the process exit code. Throw UsageError (lib/cli/args) for bad input: exit 2. */
  run(argv: string[]): Promise<number>;
}
