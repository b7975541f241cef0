// GET /api/v1/runs/{runId}/events — server-sent events for remote SDK clients (docs/architecture.md#integrations-fail-closed).
// Fed by this process's one LISTEN connection (lib/modules/stop/abort/listener.ts); every control change of the
// run's tree arrives as `event: control` with the notification as JSON. An event is a wake-up call,
// not an authority: clients re-check through the heartbeat before aborting anything.
//   event: ready    — sent once LISTEN is active: nothing committed after it can be missed
//   event: resync   — the server's listener reconnected: events may have been lost, re-check now
//   ": keep-alive"  — a comment every 15 s so proxies keep the stream open
//   event: revoked  — the key was revoked or expired (checked every few seconds): the stream ends
// The stream ends when the client goes away, when the key's authority is gone, and after
// QUIESCE_SSE_MAX_SECONDS (default 600): the client reconnects and is re-authenticated.
import { apiRoute } from "@/lib/api/route";
import { sseResponse } from "@/lib/api/sse";
import { getRunView } from "@/lib/modules/runs";
import { authenticateKey } from "@/lib/modules/keys";
import { controlListener } from "@/lib/modules/stop";
import { bearerSecret } from "@/lib/platform/auth/api-key";
import { teamListenKey, type WakeEvent } from "@/lib/agent/abort/control-event";
import { setting } from "@/lib/platform/config";
import { eventStreams } from "@/lib/modules/gate";

export const runtime = "nodejs";

const KEEPALIVE_MS = setting("QUIESCE_SSE_KEEPALIVE_MS");
const MAX_MS = setting("QUIESCE_SSE_MAX_SECONDS") * 1000;

export const GET = apiRoute({ quota: eventStreams }, async ({ principal, params, req }) => {
  // Authorizes run.read and answers 404 for another team's run, exactly like GET /runs/{runId}.
  const run = await getRunView(principal, params.runId ?? "");
  const secret = bearerSecret(req.headers.get("authorization")) ?? "";
  const ready = { runId: run.runId, rootRunId: run.rootRunId, lifecycle: run.lifecycle, epoch: run.epoch };
  return sseResponse({
    req,
    keepAliveMs: KEEPALIVE_MS,
    maxMs: MAX_MS,
    first: `retry: 1000\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`,
    // The key must still be valid (not revoked or expired) and still able to read this run.
    recheck: async () => {
      const again = await authenticateKey(secret);
      if (!again || again.teamId !== principal.teamId) return false;
      await getRunView(again, run.runId);
      return true;
    },
    // Subscribed before answering: if the database is unreachable the client gets an error status,
    // not an open stream that would never deliver anything.
    // The run's tree, and its team's fleet stops (a scope may match the run or an ancestor).
    subscribe: async (send) => {
      const onWake = (e: WakeEvent) => {
        if (e.kind === "resync") send(`event: resync\ndata: ${JSON.stringify({ rootRunId: run.rootRunId })}\n\n`);
        else if (e.teamId === principal.teamId) send(`event: control\ndata: ${JSON.stringify(e)}\n\n`);
      };
      const offTree = await controlListener().subscribe(run.rootRunId, onWake);
      try {
        const offTeam = await controlListener().subscribe(teamListenKey(principal.teamId), (e) => e.kind !== "resync" && onWake(e));
        return () => {
          offTree();
          offTeam();
        };
      } catch (err) {
        offTree();
        throw err;
      }
    },
  });
});
