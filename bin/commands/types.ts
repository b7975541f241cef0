// Commands implement lib/cli/command.ts (lib/ never imports bin/).
export type { Command } from "../../lib/cli/command";
