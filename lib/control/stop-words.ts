// The console's words for a stop (docs/fleet-stop.md#stops-in-the-console): a fleet-stop filter as a sentence a person can
// repeat, and the names of the harnesses and statuses it matches on. Pure; the JSON stays in downloads.
import type { Harness } from "./types";
import type { RunStatus } from "./fleet";

export const HARNESS_WORDS: Record<Harness, string> = { claude_code: "Claude Code", codex: "Codex", mcp: "MCP", custom: "custom" };

export interface StopFilterLike {
  harness?: readonly Harness[];
  agent?: readonly string[];
  taskPrefix?: string;
  createdAfter?: string;
  createdBefore?: string;
  status?: readonly RunStatus[];
  runIds?: readonly string[];
}

/** "a or b" / "a, b or c" */
function or(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * The filter in words: "harness is Claude Code and task starts with `release-`". `{}` is "every run of
 * the team". Times are ISO 8601 UTC (the page shows the filter; the reader's zone is for the stop's time).
 */
export function stopFilterWords(f: StopFilterLike): string {
  const parts: string[] = [];
  if (f.runIds?.length) parts.push(f.runIds.length === 1 ? `run ${f.runIds[0]}` : `${f.runIds.length} runs named by id`);
  if (f.harness?.length) parts.push(`harness is ${or(f.harness.map((h) => HARNESS_WORDS[h]))}`);
  if (f.agent?.length) parts.push(`agent is ${or(f.agent.map((a) => `\`${a}\``))}`);
  if (f.taskPrefix) parts.push(`task starts with \`${f.taskPrefix}\``);
  if (f.status?.length) parts.push(`status is ${or(f.status)}`);
  if (f.createdAfter) parts.push(`created at or after ${f.createdAfter}`);
  if (f.createdBefore) parts.push(`created before ${f.createdBefore}`);
  return parts.length === 0 ? "every run of the team" : parts.join(" and ");
}
