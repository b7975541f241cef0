// A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for driving the real `claude`
// binary (ANTHROPIC_BASE_URL). Each POST /v1/messages is answered from a script: the test says which
// tool calls the model "makes" next; when the script is empty the model answers with text and stops.
// Streaming (SSE) and non-streaming requests are both answered; every request body is kept.
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One model turn; `before` runs first (the test acts between two model calls, e.g. a kill).
 * `conversation`: only a request whose first user message contains this text takes the step (a
 * subagent's conversation starts with its own prompt), so interleaved conversations stay in order.
 */
export type ModelStep = ({ tool: string; input: Record<string, unknown>; id?: string } | { text: string }) & {
  before?: () => Promise<void>;
  conversation?: string;
};

function firstUserText(body: any): string {
  const c = body?.messages?.[0]?.content;
  if (typeof c === "string") return c;
  return Array.isArray(c) ? c.map((b: any) => (typeof b?.text === "string" ? b.text : "")).join("\n") : "";
}

export interface FakeAnthropic {
  url: string;
  requests: { path: string; body: any }[];
  /** Queue the next model turns (one per /v1/messages call that carries the main conversation). */
  script(steps: ModelStep[]): void;
  /** Forgets unplayed steps (each test starts from an empty script). */
  clear(): void;
  close(): Promise<void>;
}

let seq = 0;

function sse(res: http.ServerResponse, model: string, step: ModelStep) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const ev = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`);
  const id = `msg_fake_${++seq}`;
  ev("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  if ("tool" in step) {
    const toolId = step.id ?? `toolu_fake_${seq}`;
    ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: toolId, name: step.tool, input: {} } });
    ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(step.input) } });
    ev("content_block_stop", { index: 0 });
    ev("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } });
  } else {
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: step.text } });
    ev("content_block_stop", { index: 0 });
    ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } });
  }
  ev("message_stop", {});
  res.end();
}

function json(res: http.ServerResponse, model: string, step: ModelStep) {
  const content =
    "tool" in step
      ? [{ type: "tool_use", id: step.id ?? `toolu_fake_${++seq}`, name: step.tool, input: step.input }]
      : [{ type: "text", text: step.text }];
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: `msg_fake_${++seq}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: "tool" in step ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
  );
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const queue: ModelStep[] = [];
  const requests: { path: string; body: any }[] = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      let body: any = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        /* keep {} */
      }
      requests.push({ path: req.url ?? "", body });
      const path = (req.url ?? "").split("?")[0];
      if (req.method === "POST" && path === "/v1/messages/count_tokens") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ input_tokens: 10 }));
      }
      if (req.method !== "POST" || path !== "/v1/messages") {
        res.writeHead(404, { "content-type": "application/json" });
        return res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "fake" } }));
      }
      // Side requests (titles, summaries: no tools offered) get text and do not consume the script.
      const main = Array.isArray(body.tools) && body.tools.length > 0;
      let step: ModelStep = { text: "ok" };
      if (main) {
        const first = firstUserText(body);
        const i = queue.findIndex((st) => st.conversation === undefined || first.includes(st.conversation));
        step = i >= 0 ? queue.splice(i, 1)[0]! : { text: "Done." };
      }
      void (step.before ?? (async () => {}))().then(() => {
        if (body.stream) sse(res, body.model ?? "claude-fake", step);
        else json(res, body.model ?? "claude-fake", step);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (steps) => queue.push(...steps),
    clear: () => {
      queue.length = 0;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
