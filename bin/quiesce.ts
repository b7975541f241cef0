#!/usr/bin/env -S npx tsx --conditions=react-server
// `npm run quiesce -- <command> [flags]`: dispatches to bin/commands/*.
// Exit codes: 0 ok, 1 the operation failed, 2 bad usage (nothing was changed).
import { commands } from "./commands/index";
import { UsageError } from "../lib/cli/args";
import { QuiesceError } from "../lib/platform/errors";
import { assertConfig } from "../lib/platform/config";

/** Own entries only: `quiesce toString` is an unknown command, not Object.prototype.toString. */
const lookup = (name: string | undefined) => (name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined);

async function help(name?: string): Promise<string> {
  const one = lookup(name);
  if (one) {
    const c = await one();
    return `${c.summary}\n\nusage: ${c.usage}`;
  }
  const width = Math.max(...Object.keys(commands).map((n) => n.length), 4);
  const loaded = await Promise.all(Object.entries(commands).map(async ([n, load]) => [n, await load()] as const));
  const lines = loaded.sort(([a], [b]) => a.localeCompare(b)).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return [
    "usage: npm run quiesce -- <command> [flags]",
    "",
    "commands:",
    `  ${"help".padEnd(width)}  show this list, or \`help <command>\``,
    ...lines,
    "",
    "Machine and operator commands read QUIESCE_URL and QUIESCE_API_KEY (flags --url/--key override).",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  assertConfig(); // a malformed environment variable stops every command before it does anything
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    console.log(await help(rest[0]));
    if (rest[0] && !lookup(rest[0])) {
      console.error(`unknown command: ${rest[0]}`);
      return 2;
    }
    return 0;
  }
  const load = lookup(name);
  if (!load) {
    console.error(`unknown command: ${name}\n\n${await help()}`);
    return 2;
  }
  const command = await load();
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}\nusage: ${command.usage}`);
      return 2;
    }
    if (err instanceof QuiesceError) {
      console.error(`error (${err.code}): ${err.message}`);
      return err.httpStatus < 500 ? 2 : 1;
    }
    console.error(`error: ${(err as Error).message ?? err}`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  // A command that has returned is done: if a pool, socket or stream it opened still holds the event
  // loop (and so `npm start`'s shutdown) two seconds later, exit anyway. The timer is unref'd, so it
  // never keeps a finished process alive by itself.
  setTimeout(() => process.exit(code), 2_000).unref();
});
