// Transport loss on demand, for the approved-artifact handoff (docs/ideas.md#five-questions: "simulates transport loss
// after the side effect"). Wraps fetch: a request matched by a rule either never leaves
// (before_server) or is sent and answered, and its answer is then thrown away (after_server). Either
// way the caller sees what a dropped connection looks like: a rejected fetch.
export type Loss = "before_server" | "after_server";

interface Rule {
  match: (method: string, url: string) => boolean;
  how: Loss;
}

export interface LossyFetch {
  fetch: typeof fetch;
  /** Lose the next request that matches. */
  loseNext(match: (method: string, url: string) => boolean, how: Loss): void;
  /** Requests lost so far. */
  readonly lost: { method: string; url: string; how: Loss }[];
}

export function lossyFetch(base: typeof fetch = globalThis.fetch.bind(globalThis)): LossyFetch {
  const rules: Rule[] = [];
  const lost: LossyFetch["lost"] = [];
  const wrapped = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.toString() : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const i = rules.findIndex((r) => r.match(method, url));
    if (i < 0) return base(input, init);
    const rule = rules.splice(i, 1)[0]!;
    if (rule.how === "after_server") {
      // The server processes the request in full; only its answer is lost.
      const res = await base(input, init);
      await res.arrayBuffer().catch(() => undefined);
    }
    lost.push({ method, url, how: rule.how });
    throw new TypeError("fetch failed", { cause: { code: "ECONNRESET", simulated: rule.how } });
  }) as typeof fetch;
  return {
    fetch: wrapped,
    loseNext: (match, how) => {
      rules.push({ match, how });
    },
    lost,
  };
}
