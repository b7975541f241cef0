// Abort tokens over PostgreSQL LISTEN/NOTIFY (in-process) — see tokens.ts for the semantics and
// lib/sdk/worker for the remote (server-sent events) feed.
export {
  AbortTokens,
  OperationAbortedError,
  type AbortToken,
  type AbortReason,
  type ControlFeed,
  type Recheck,
  type RecheckAnswer,
  type TokenTarget,
} from "./tokens";
export { ControlListener, controlListener, closeControlListener } from "./listener";
export { listenFeed } from "./listen-feed";
export { gateRecheck } from "./gate-recheck";
export { ControlEventSchema, parseControlEvent, type WakeEvent, type ResyncEvent } from "./control-event";
