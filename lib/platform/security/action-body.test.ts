import { expect, test } from "vitest";
import { ACTION_BODY_LIMIT_BYTES, actionBodyRefusal } from "./action-body";

const action = (h: Record<string, string>) => new Headers({ "next-action": "abc", ...h });

test("a server action past the limit, or of unknown length, is refused before its body is read", () => {
  expect(actionBodyRefusal("POST", action({ "content-length": String(3_000_000) }))?.status).toBe(413);
  expect(actionBodyRefusal("POST", action({ "content-length": String(ACTION_BODY_LIMIT_BYTES + 1) }))?.status).toBe(413);
  expect(actionBodyRefusal("POST", action({ "content-length": "1e9" }))?.status).toBe(413);
  expect(actionBodyRefusal("POST", action({ "transfer-encoding": "chunked" }))?.status).toBe(411);
  expect(actionBodyRefusal("POST", action({ "content-length": String(ACTION_BODY_LIMIT_BYTES) }))).toBeNull();
  // Not a server action: left to the page (and to the API's own limits).
  expect(actionBodyRefusal("POST", new Headers({ "content-length": String(3_000_000) }))).toBeNull();
  expect(actionBodyRefusal("GET", action({ "content-length": String(3_000_000) }))).toBeNull();
});
