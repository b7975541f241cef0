// Human summary of a fleet stop answer (dry run or progress) for `quiesce stop` / `quiesce stops show`.
import type { StopDryRunResponse, StopView } from "../schemas/stops";

export function describeStop(r: StopView | StopDryRunResponse): string {
  if ("dryRun" in r) {
    const lines = [
      `dry run: ${r.action} would cover ${r.matched} run(s)${r.action === "kill" ? `, ${r.barrierTargets} barrier(s)` : ""}; nothing was changed`,
    ];
    for (const s of r.sample) lines.push(`  ${s.runId}  ${s.status.padEnd(8)} ${s.harness.padEnd(11)} ${s.taskId}  ${s.createdAt}`);
    if (r.matched > r.sample.length) lines.push(`  … and ${r.matched - r.sample.length} more`);
    return lines.join("\n");
  }
  const b = r.barriers;
  const lines = [
    `fleet stop ${r.stopId}: ${r.action}, ${r.matched} run(s) matched at commit; dispatch ${r.dispatchStopped ? "stopped" : `resumed at ${r.liftedAt}`}`,
    `  reason: ${r.reason} (by ${r.requestedBy} at ${r.createdAt})`,
  ];
  if (r.action === "kill") {
    lines.push(
      `  barriers: ${b.started}/${b.total} started, ${b.complete} complete, ${b.stopIncomplete} stop_incomplete, ${b.failed} failed; open reconciliations ${r.openReconciliations}`,
    );
    lines.push(
      r.receipt
        ? `  fleet receipt: ${r.receipt.decision}, digest sha256:${r.receipt.digest} (issued ${r.receipt.issuedAt})`
        : "  fleet receipt: not yet (every barrier needs its receipt first)",
    );
  }
  return lines.join("\n");
}
