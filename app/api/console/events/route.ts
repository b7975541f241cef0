// Live console updates: server-sent events fed by the process's one LISTEN connection on
// quiesce_control (lib/abort/listener.ts). Only the member's own team's events are forwarded, and each
// event is only a hint to refetch — the pages re-read through the authorized dal. The stream ends
// after a minute and the browser reconnects, so a removed member stops receiving within that minute.
import { currentSession } from "@/lib/dal/session";
import { controlListener } from "@/lib/abort/listener";

export const dynamic = "force-dynamic";

const STREAM_SECONDS = 60;
const PING_SECONDS = 15;

export async function GET(req: Request): Promise<Response> {
  const session = await currentSession();
  if (!session) return Response.json({ error: { code: "unauthenticated", message: "sign in" } }, { status: 401 });
  const teamId = session.principal.teamId;
  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let open = true;
      const send = (text: string) => { if (open) { try { controller.enqueue(encoder.encode(text)); } catch { close(); } } };
      const close = () => {
        if (!open) return;
        open = false;
        cleanup();
        try { controller.close(); } catch { /* already closed */ }
      };
      send(`retry: 2000\n: connected\n\n`);
      const unsubscribe = await controlListener().subscribe("*", (e) => {
        if (e.kind === "resync") { send(`event: control\ndata: ${JSON.stringify({ kind: "resync" })}\n\n`); return; }
        if (e.teamId !== teamId) return;
        send(`event: control\ndata: ${JSON.stringify({ kind: e.kind, rootRunId: e.rootRunId, runIds: e.runIds, barrierId: e.barrierId })}\n\n`);
      }).catch(() => null);
      if (!unsubscribe) { send(`event: control\ndata: {"kind":"resync"}\n\n`); close(); return; }
      const ping = setInterval(() => send(`: ping\n\n`), PING_SECONDS * 1000);
      const end = setTimeout(close, STREAM_SECONDS * 1000);
      cleanup = () => { clearInterval(ping); clearTimeout(end); unsubscribe(); };
      req.signal.addEventListener("abort", close);
    },
    cancel() { cleanup(); },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store, no-transform", connection: "keep-alive", "x-accel-buffering": "no" },
  });
}
