// The web app under test, as its own process: `next start` when an up-to-date production build exists
// (.next/BUILD_ID newer than every source file) and QUIESCE_EVAL_SERVER is not "handlers"; otherwise
// the same route handlers served over plain HTTP without Next (api-process.ts). Both are the real
// handlers over real HTTP; the report says which one ran and why.
import { existsSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { checkBuild } from "../../lib/start/build-check";
import { ROOT, spawnProc, spawnTs, waitUntil, type Proc } from "./proc";
import { ensureCliBuild } from "../../lib/build/cli-build.mjs";
import { setting } from "../../lib/platform/config";

export type WebKind = "next start" | "route handlers (evals/support/api-process.ts)";
export interface WebChoice {
  kind: WebKind;
  reason: string;
}

export function chooseWebServer(choice = setting("QUIESCE_EVAL_SERVER")): WebChoice {
  const handlers: WebKind = "route handlers (evals/support/api-process.ts)";
  if (choice === "handlers") return { kind: handlers, reason: "QUIESCE_EVAL_SERVER=handlers" };
  const hasBuild = existsSync(path.join(ROOT, ".next", "BUILD_ID"));
  if (choice === "next") {
    if (!hasBuild) throw new Error("QUIESCE_EVAL_SERVER=next but there is no production build (.next/BUILD_ID); run `npm run build`");
    return { kind: "next start", reason: "QUIESCE_EVAL_SERVER=next" };
  }
  if (!hasBuild) return { kind: handlers, reason: "no production build (.next/BUILD_ID is missing)" };
  const b = checkBuild(ROOT);
  // A stale build would evaluate yesterday's code: fall back to the handlers of the source tree.
  if (b.needed) return { kind: handlers, reason: `the production build is stale: ${b.reason}` };
  return { kind: "next start", reason: "an up-to-date production build exists" };
}

export class WebApp {
  proc!: Proc;
  readonly url: string;
  private readonly secret = randomBytes(24).toString("base64url");

  constructor(
    readonly choice: WebChoice,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const env = {
      ...this.env,
      PORT: String(this.port),
      QUIESCE_URL: this.url,
      NEXTAUTH_URL: this.url,
      NEXTAUTH_SECRET: this.secret,
      NEXT_TELEMETRY_DISABLED: "1",
    };
    this.proc =
      this.choice.kind === "next start"
        ? // Next behind the project's front (lib/start/web-front.ts), as `npm start` runs it.
          spawnProc(
            "web",
            process.execPath,
            [path.join((await ensureCliBuild(ROOT)).dir, "web.mjs"), "start", "-p", String(this.port), "-H", "127.0.0.1"],
            { env, logDir: this.logDir },
          )
        : spawnTs("web", path.join(ROOT, "evals", "support", "api-process.ts"), [], { env, logDir: this.logDir });
    const proc = this.proc;
    await waitUntil(
      `the web app at ${this.url}`,
      async () => {
        if (!proc.alive()) throw new Error(`the web app exited:\n${proc.tail(30)}`);
        const r = await fetch(`${this.url}/api/v1/openapi.json`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
        return r?.ok ?? false;
      },
      120_000,
      300,
    );
  }

  /** Stops the process and starts a new one on the same port (restart survival). */
  async restart(): Promise<void> {
    await this.proc.stop("SIGTERM");
    await this.start();
  }

  async stop(): Promise<void> {
    await this.proc?.stop("SIGTERM");
  }
}
