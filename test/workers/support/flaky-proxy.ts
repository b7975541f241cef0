// A real HTTP proxy in front of the API server that can lose a request in transport — before the
// server sees it, or after the server processed it (the response never reaches the client). The
// connection is destroyed, so the client sees exactly what a network failure looks like.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Loss = "before_server" | "after_server";
export interface FlakyProxy {
  url: string;
  /** Lose the next request whose method+path matches. */
  loseNext(match: (method: string, path: string) => boolean, how: Loss): void;
  lost: { method: string; path: string; how: Loss }[];
  close(): Promise<void>;
}

export async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const rules: { match: (m: string, p: string) => boolean; how: Loss }[] = [];
  const lost: FlakyProxy["lost"] = [];
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const i = rules.findIndex((r) => r.match(method, path));
    const rule = i >= 0 ? rules.splice(i, 1)[0] : undefined;
    if (rule?.how === "before_server") {
      lost.push({ method, path, how: rule.how });
      req.resume();
      req.socket.destroy();
      return;
    }
    const fwd = http.request({ host: upstream.hostname, port: upstream.port, method, path, headers: req.headers }, (up) => {
      if (rule?.how === "after_server") {
        // Let the server finish (read its whole answer), then drop the client's connection.
        up.resume();
        up.on("end", () => {
          lost.push({ method, path, how: rule.how });
          req.socket.destroy();
        });
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    fwd.on("error", () => req.socket.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    loseNext: (match, how) => {
      rules.push({ match, how });
    },
    lost,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
