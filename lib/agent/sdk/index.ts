// Public entry of the TypeScript SDK.
export { QuiesceClient, type QuiesceClientOptions, type ListRunsParams, type CreateRunInput } from "./client";
export { QuiesceApiError, QuiesceUnreachableError, QuiesceConfigError } from "./errors";
export { askGate, backoffDelay, type AskGateOptions, type GateAnswer, type HoldOutcome } from "./hold";
export { callArguments } from "./arguments";
