import { expect, test } from "vitest";
import { callArguments, MAX_ARGUMENTS_JSON } from "./arguments";

test("an object is sent as is, other input wrapped, input too large to show replaced by its digest", () => {
  expect(callArguments({ command: "ls" })).toEqual({ command: "ls" });
  expect(callArguments("ls -la")).toEqual({ input: "ls -la" });
  expect(callArguments([1, 2])).toEqual({ input: [1, 2] });
  expect(callArguments(undefined)).toBeUndefined();
  const big = { content: "x".repeat(MAX_ARGUMENTS_JSON) };
  const a = callArguments(big)!;
  expect(a).toMatchObject({ omitted: "larger than 64 KiB", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(callArguments({ content: "x".repeat(MAX_ARGUMENTS_JSON) })).toEqual(a);
  expect(callArguments({ content: `${"x".repeat(MAX_ARGUMENTS_JSON - 1)}y` })!.sha256).not.toBe(a.sha256);
});
