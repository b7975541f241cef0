// A supervisor in a process of its own, so a test can SIGKILL it: starts `sh -c <script>` with the
// given mechanism, prints "ready", and on a "kill" line from stdin starts emptying the tree with a long grace.
import { createInterface } from "node:readline";
import { Supervisor } from "../../lib/agent/supervisor/supervisor";
import type { Mechanism } from "../../lib/agent/supervisor/container";

const [mechanism, stateDir, runId, script] = process.argv.slice(2);
const sup = await Supervisor.start(["sh", "-c", script!], {
  runId: runId!,
  stateDir: stateDir!,
  mechanism: mechanism as Mechanism,
  stdio: "ignore",
  trackMs: 20,
});
process.stdout.write(`ready ${sup.stateFile}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "kill") {
    process.stdout.write("killing\n");
    await sup.kill(60_000);
  }
}
