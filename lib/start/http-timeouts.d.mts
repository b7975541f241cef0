import type { Server } from "node:http";

export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  bodyIdleMs: number;
}
export function httpTimeoutOptions(t: Pick<HttpTimeouts, "headersMs" | "requestMs">): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
};
export function watchBodyIdle(server: Server, bodyIdleMs: number): void;
export function boundEveryServer(t: HttpTimeouts): void;
