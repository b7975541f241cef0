import { expect, test } from "vitest";
import { claudeSession } from "./claude-session";

const id = "0b6f5a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const fresh = () => "11111111-2222-4333-8444-555555555555";

test("a fresh session gets an id; a named one keeps its own", () => {
  expect(claudeSession(["-p", "hi"], fresh)).toEqual({ sessionId: fresh(), args: ["--session-id", fresh(), "-p", "hi"] });
  expect(claudeSession(["--session-id", id, "-p", "hi"], fresh)).toEqual({ sessionId: id, args: ["--session-id", id, "-p", "hi"] });
  expect(claudeSession([`--session-id=${id}`], fresh).sessionId).toBe(id);
});

test("a resumed session keeps its id; a fork gets a new one; --continue and the picker are claude's to choose", () => {
  expect(claudeSession(["--resume", id], fresh)).toEqual({ sessionId: id, args: ["--resume", id] });
  expect(claudeSession(["-r", id, "-p", "go on"], fresh).sessionId).toBe(id);
  expect(claudeSession(["--resume", id, "--fork-session"], fresh)).toEqual({
    sessionId: fresh(),
    args: ["--session-id", fresh(), "--resume", id, "--fork-session"],
  });
  expect(claudeSession(["--continue"], fresh)).toEqual({ sessionId: null, args: ["--continue"] });
  expect(claudeSession(["-c", "-p", "more"], fresh).sessionId).toBeNull();
  expect(claudeSession(["--resume"], fresh).sessionId).toBeNull();
  expect(claudeSession(["-r", "search words"], fresh).sessionId).toBeNull();
});
