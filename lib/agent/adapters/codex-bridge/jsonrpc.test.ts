// The bridge must forward what it does not understand and recognise what it must act on: every
// well-formed JSON-RPC message is classified by its shape, anything else passes through raw.
import fc from "fast-check";
import { expect, test } from "vitest";
import { classify } from "./jsonrpc";

const id = fc.oneof(fc.integer(), fc.string({ minLength: 1 }));
const method = fc.string({ minLength: 1 });

test("requests, notifications and responses are told apart by shape; other lines stay raw", () => {
  fc.assert(
    fc.property(id, method, fc.jsonValue(), (i, m, params) => {
      expect(classify(JSON.stringify({ id: i, method: m, params })).kind).toBe("request");
      expect(classify(JSON.stringify({ method: m, params })).kind).toBe("notification");
      expect(classify(JSON.stringify({ id: i, result: params })).kind).toBe("response");
      expect(classify(JSON.stringify({ id: i, error: { code: -1, message: "x" } })).kind).toBe("response");
    }),
  );
  fc.assert(
    fc.property(fc.string(), (line) => {
      const c = classify(line);
      if (c.kind === "raw") expect(c.line).toBe(line);
    }),
  );
  expect(classify("[1,2]").kind).toBe("raw");
  expect(classify("null").kind).toBe("raw");
});
