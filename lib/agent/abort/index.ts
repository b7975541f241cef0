// Abort tokens: see tokens.ts for the semantics. Their feeds: lib/agent/sdk/worker's server-sent events
// (agent side) or lib/modules/stop/abort's LISTEN connection (inside a server process).
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
export { ControlEventSchema, parseControlEvent, type WakeEvent, type ResyncEvent } from "./control-event";
