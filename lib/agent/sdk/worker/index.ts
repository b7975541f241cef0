// The worker guard for any queue: admit at dequeue, abort tokens, heartbeats, effect reports.
// Remote workers use sseFeed (HTTP only); in-process workers may use lib/agent/abort's listenFeed and
// gateRecheck (PostgreSQL LISTEN and the gate's heartbeat in one round trip).
export {
  WorkerGuard,
  ControlUnavailableError,
  StillHeldError,
  type GuardClient,
  type GuardOutcome,
  type JobContext,
  type WorkerGuardOptions,
} from "./guard";
export { JobStampSchema, readStamp, type JobStamp, type RunAuthority } from "./stamp";
export { fileJournal, memoryJournal, type ExecutorJournal, type JournalEntry, type JournalEffect } from "./journal";
export { sseFeed } from "./sse-feed";
export { counterFor, GuardCounters } from "./counters";
