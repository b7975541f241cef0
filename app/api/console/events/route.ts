// Live console updates: server-sent events fed by the process's one LISTEN connection on
// quiesce_control (lib/modules/stop/abort/listener.ts). Only the member's own team's events are forwarded, and each
// event is only a hint to refetch — the pages re-read through the authorized dal. The member's session
// is re-checked every few seconds (lib/api/sse.ts): a removed member, a disabled user or an ended
// session stops receiving at once. The stream is also rotated every QUIESCE_CONSOLE_STREAM_SECONDS
// (default 60): it announces `event: rotate` with `retry: 250` first, the browser is back within a
// fraction of a second, and the Live badge does not flicker (components/providers.tsx).
import { currentSession, sessionRecheck } from "@/lib/modules/sessions";
import { controlListener } from "@/lib/modules/stop";
import { SSE_HEADERS, sseResponse } from "@/lib/api/sse";
import { setting } from "@/lib/platform/config";

export const dynamic = "force-dynamic";

const PING_SECONDS = 15;

export async function GET(req: Request): Promise<Response> {
  const session = await currentSession();
  if (!session) return Response.json({ error: { code: "unauthenticated", message: "sign in" } }, { status: 401 });
  const teamId = session.principal.teamId;
  const recheck = await sessionRecheck();
  try {
    return await sseResponse({
      req,
      recheck,
      keepAliveMs: PING_SECONDS * 1000,
      maxMs: setting("QUIESCE_CONSOLE_STREAM_SECONDS") * 1000,
      beforeMaxClose: `retry: 250\nevent: rotate\ndata: {}\n\n`,
      first: `retry: 2000\n: connected\n\n`,
      subscribe: (send) =>
        controlListener().subscribe("*", (e) => {
          if (e.kind === "resync") {
            send(`event: control\ndata: ${JSON.stringify({ kind: "resync" })}\n\n`);
            return;
          }
          if (e.teamId !== teamId) return;
          send(
            `event: control\ndata: ${JSON.stringify({ kind: e.kind, rootRunId: e.rootRunId, runIds: e.runIds, barrierId: e.barrierId })}\n\n`,
          );
        }),
    });
  } catch {
    // The listener is unreachable: tell the page to refetch and let the browser reconnect shortly.
    return new Response(`retry: 2000\nevent: control\ndata: {"kind":"resync"}\n\n`, { headers: SSE_HEADERS });
  }
}
