// Ports for the eval run's servers: the first free one in 3500–3599 (the range set aside for evals).
import net from "node:net";

const taken = new Set<number>();

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

export async function freePort(from = 3500, to = 3599): Promise<number> {
  for (let p = from; p <= to; p++) {
    if (taken.has(p)) continue;
    if (await free(p)) {
      taken.add(p);
      return p;
    }
  }
  throw new Error(`no free port in ${from}–${to}`);
}
