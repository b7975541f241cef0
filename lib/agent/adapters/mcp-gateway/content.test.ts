import { expect, test } from "vitest";
import { adaptResult, negotiatedVersion } from "./content";

const result = {
  content: [
    { type: "text" as const, text: "t" },
    { type: "resource_link" as const, uri: "file:///a.txt", name: "a.txt" },
    { type: "audio" as const, data: "AAAA", mimeType: "audio/wav" },
  ],
  structuredContent: { x: 1 },
};

test("newer content types reach older clients as text; the latest version gets everything", () => {
  expect(adaptResult(result, "2025-11-25")).toEqual(result);
  const mid = adaptResult(result, "2025-03-26");
  expect(mid.content.map((c) => c.type)).toEqual(["text", "text", "audio"]);
  expect(mid.structuredContent).toBeUndefined();
  const old = adaptResult(result, "2024-11-05");
  expect(old.content.map((c) => c.type)).toEqual(["text", "text", "text"]);
  expect((old.content[1] as { text: string }).text).toBe("a.txt: file:///a.txt");
  expect(negotiatedVersion("2024-11-05")).toBe("2024-11-05");
  expect(negotiatedVersion("1999-01-01")).toBe(negotiatedVersion(undefined));
});
