// Flag parsing for every CLI command, on node:util parseArgs (commander 15 needs Node 22).
// A bad flag is a UsageError: the CLI prints it with the command's usage and exits 2, changing nothing.
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseFlags<O extends Options>(argv: string[], options: O, opts: { positionals?: boolean } = {}) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: opts.positionals ?? true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ""));
  }
}

export function requireFlag(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** The one positional argument a command takes (an id), trimmed; a clear usage error otherwise. */
export function onePositional(positionals: string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`${what} is required`);
  if (positionals.length > 1) throw new UsageError(`expected one ${what}, got ${positionals.length}: ${positionals.join(" ")}`);
  const v = positionals[0]!.trim();
  if (!v) throw new UsageError(`${what} must not be empty`);
  return v;
}
