// `quiesce restart <runId> --reason …`: over the API with an operator key (lib/cli/control-command.ts).
import { controlCommand } from "../../lib/cli/control-command";

export const restartCommand = controlCommand("restart");
