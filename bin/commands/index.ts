// The CLI's command registry: one file per command under bin/commands/, one line here.
import type { Command } from "./types";

export const commands: Record<string, Command> = {
};
