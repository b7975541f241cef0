// A tool call's input as the gate's `arguments`: an approval is bound to their canonical digest and an
// approver reads them (docs/adapters.md#approvals-and-budgets). The gate takes a JSON object of at
// most 64 KiB, so other input is wrapped and input too large to show is replaced by its digest: the
// approval still binds to exactly that input, and the call is never refused for its size alone.
import { canonicalJson, sha256Hex } from "../../control/canonical";

export const MAX_ARGUMENTS_JSON = 65_536;

export function callArguments(input: unknown): Record<string, unknown> | undefined {
  if (input === undefined) return undefined;
  const object = input !== null && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
  const text = JSON.stringify(object);
  if (text.length <= MAX_ARGUMENTS_JSON) return object;
  return { omitted: "larger than 64 KiB", sha256: sha256Hex(canonicalJson(object)), bytes: Buffer.byteLength(text) };
}
