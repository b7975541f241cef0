// The abort stream inside a server process: one LISTEN connection feeding the abort tokens, and the
// gate re-check a token runs on a wake. Agent-side processes use lib/agent/sdk/worker's SSE feed instead.
import "server-only";
export { ControlListener, controlListener, closeControlListener } from "./listener";
export { listenFeed } from "./listen-feed";
export { gateRecheck } from "../../gate/recheck";
