import { expect, test } from "vitest";
import { isMalformedPath, malformedUrlPage } from "./malformed-url";

test("a path is malformed exactly when it does not percent-decode", () => {
  for (const bad of ["/runs/%E0%A4%A", "/%", "/runs/%", "/barriers/%ZZ", "/x/%C3%28", "/%E0%A4"])
    expect(isMalformedPath(bad), bad).toBe(true);
  for (const ok of ["/", "/runs", "/runs/run_abc", "/runs/%E0%A4%A4", "/receipts/b%20c", "/a%2Fb"])
    expect(isMalformedPath(ok), ok).toBe(false);
});

test("the page says 400 and offers the way back", () => {
  const html = malformedUrlPage();
  expect(html).toContain("400 — this address is not valid");
  expect(html).toContain('href="/runs"');
  expect(html).not.toMatch(/<script/i);
});
