// A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for driving the real `codex` binary
// through a custom `model_providers` entry. Each POST /v1/responses (streamed) is answered from a
// script: a shell call (`exec_command`, the tool Codex offers) or a text message; every body is kept.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type CodexStep = ({ cmd: string; escalate?: boolean } | { text: string }) & { before?: () => Promise<void> };

export interface FakeOpenAI {
  url: string;
  requests: any[];
  script(steps: CodexStep[]): void;
  /** Forgets unplayed steps (each test starts from an empty script). */
  clear(): void;
  close(): Promise<void>;
}

let seq = 0;

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: CodexStep[] = [];
  const requests: any[] = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      let body: any = {};
      try {
        body = JSON.parse(raw);
      } catch {
        /* keep {} */
      }
      requests.push(body);
      if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/responses")) {
        res.writeHead(404, { "content-type": "application/json" });
        return res.end("{}");
      }
      const step = queue.shift() ?? { text: "Done." };
      void (step.before ?? (async () => {}))().then(() => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const ev = (o: Record<string, unknown>) => res.write(`event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`);
        const id = `resp_fake_${++seq}`;
        ev({ type: "response.created", response: { id } });
        if ("cmd" in step) {
          const args = {
            cmd: step.cmd,
            ...(step.escalate ? { sandbox_permissions: "require_escalated", justification: "test needs to write" } : {}),
          };
          ev({
            type: "response.output_item.done",
            item: {
              type: "function_call",
              id: `fc_${seq}`,
              call_id: `call_${seq}`,
              name: "exec_command",
              arguments: JSON.stringify(args),
              status: "completed",
            },
          });
        } else {
          ev({
            type: "response.output_item.done",
            item: { type: "message", role: "assistant", id: `msg_${seq}`, content: [{ type: "output_text", text: step.text }] },
          });
        }
        ev({
          type: "response.completed",
          response: {
            id,
            usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 },
          },
        });
        res.end();
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

/** CODEX_HOME/config.toml pointing Codex at the fake. */
export function codexConfig(fakeUrl: string): string {
  return [
    'model = "gpt-fake"',
    'model_provider = "fake"',
    "",
    "[model_providers.fake]",
    'name = "fake"',
    `base_url = "${fakeUrl}/v1"`,
    'wire_api = "responses"',
    'env_key = "FAKE_OPENAI_KEY"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
  ].join("\n");
}
