// JSON-RPC over stdio as `codex app-server` speaks it: one JSON message per line (JSONL), the
// "jsonrpc":"2.0" header omitted on the wire (codex-rs/app-server/README.md, "Protocol").
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

export type RpcId = string | number;
export type RpcMessage = {
  id?: RpcId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  [k: string]: unknown;
};

export type Classified =
  | { kind: "request"; msg: RpcMessage & { id: RpcId; method: string } }
  | { kind: "notification"; msg: RpcMessage & { method: string } }
  | { kind: "response"; msg: RpcMessage & { id: RpcId } }
  | { kind: "raw"; line: string };

export function classify(line: string): Classified {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return { kind: "raw", line };
  }
  if (!msg || typeof msg !== "object" || Array.isArray(msg)) return { kind: "raw", line };
  const m = msg as RpcMessage;
  const hasId = typeof m.id === "string" || typeof m.id === "number";
  if (typeof m.method === "string") {
    return hasId
      ? { kind: "request", msg: m as RpcMessage & { id: RpcId; method: string } }
      : { kind: "notification", msg: m as RpcMessage & { method: string } };
  }
  if (hasId) return { kind: "response", msg: m as RpcMessage & { id: RpcId } };
  return { kind: "raw", line };
}

export function onLines(stream: Readable, handle: (line: string) => void): Promise<void> {
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (line.trim()) handle(line);
  });
  return new Promise((resolve) => rl.once("close", () => resolve()));
}

export class LineWriter {
  constructor(private readonly out: Writable) {}
  send(msg: RpcMessage): void {
    this.out.write(`${JSON.stringify(msg)}\n`);
  }
  raw(line: string): void {
    this.out.write(`${line}\n`);
  }
}

/** A small accessor for untyped params: a string field or undefined. */
export function str(obj: unknown, ...keys: string[]): string | undefined {
  let cur: unknown = obj;
  for (const k of keys) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return typeof cur === "string" ? cur : undefined;
}
