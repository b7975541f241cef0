// The run page's event history (docs/console.md#run-timeline): one newest-first timeline merging
//   decision   every gate decision about the run (gate, admit, heartbeat, complete, report)
//   operation  every operation registered for the run, with its current state
//   control    every audited control event whose target is the run (register, pause, resume, kill,
//              breaker trips and resets, native turns, completion)
//   ack        acknowledgments: the harness saw the stop (observed by target, on the covering barrier)
//              and providers answered a cancel request for one of the run's operations
// paged by a keyset cursor over (at, kind, key): each source reads at most one page from its own index,
// so the 40th page costs what the first does. Another team's run answers 404, like a missing one.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { badRequest, notFound } from "../../../platform/errors";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPERATION_STATE_WORDS, STATE_REASON_WORDS, wordFor } from "../../../control/stop-words";

export const TIMELINE_KINDS = ["decision", "operation", "control", "ack"] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export interface TimelineEvent {
  /** unique within the run's timeline */
  key: string;
  kind: TimelineKind;
  at: string;
  /** short, human: "deny — run_killed", "deploy.prod (call) registered", "run.pause", … */
  title: string;
  detail: string | null;
  actor: string | null;
  /** a console page this event belongs to (a barrier), when there is one */
  link: string | null;
}

export interface TimelinePage {
  runId: string;
  items: TimelineEvent[];
  nextCursor: string | null;
}

interface Cursor {
  at: string;
  kind: string;
  key: string;
}

function encode(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.kind, c.key])).toString("base64url");
}

export function decodeTimelineCursor(text: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(v) || v.length !== 3 || !v.every((x) => typeof x === "string")) throw new Error();
    const [at, kind, key] = v as [string, string, string];
    if (Number.isNaN(Date.parse(at)) || !(TIMELINE_KINDS as readonly string[]).includes(kind) || key.length > 300) throw new Error();
    return { at, kind, key };
  } catch {
    throw badRequest("cursor: not a timeline cursor this page issued");
  }
}

interface Row {
  kind: TimelineKind;
  at: Date;
  key: string;
  data: Record<string, unknown>;
}

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : v == null ? null : String(v));

function describe(r: Row): TimelineEvent {
  const d = r.data;
  const base = { key: `${r.kind}:${r.key}`, kind: r.kind, at: r.at.toISOString(), actor: null, link: null, detail: null };
  switch (r.kind) {
    case "decision":
      return {
        ...base,
        title: `${str(d.decision)} — ${str(d.reason)}`,
        detail: [
          str(d.source) !== "gate" ? `via ${str(d.source)}` : null,
          d.operationId ? `operation ${str(d.operationId)}` : null,
          d.epochSeen != null ? `epoch ${str(d.epochSeen)}/${str(d.currentEpoch)}` : null,
        ]
          .filter(Boolean)
          .join(" · "),
      };
    case "operation":
      return {
        ...base,
        // The state and its reason in the stop vocabulary (lib/control/stop-words.ts), as every other page says them.
        title: `${str(d.tool)} (${str(d.kind)}) registered — now ${wordFor(OPERATION_STATE_WORDS, str(d.state) ?? "").toLowerCase()}`,
        detail: [`operation ${str(d.operationId)}`, d.stateReason ? wordFor(STATE_REASON_WORDS, str(d.stateReason)!) : null]
          .filter(Boolean)
          .join(" · "),
      };
    case "control": {
      const after = (d.after ?? {}) as Record<string, unknown>;
      const barrierId = str(after.barrierId);
      return {
        ...base,
        title: str(d.action) ?? "control event",
        detail: str(after.reason),
        actor: str(d.actor),
        link: barrierId ? `/barriers/${barrierId}` : null,
      };
    }
    case "ack":
      return {
        ...base,
        title: d.meaning ? `observed by target: ${str(d.meaning)}` : `provider answered the cancel: ${str(d.providerResponse)}`,
        detail: d.operationId ? `operation ${str(d.operationId)}` : null,
        actor: str(d.by),
        link: d.barrierId ? `/barriers/${str(d.barrierId)}` : null,
      };
  }
}

export async function listRunTimeline(p: Principal, runId: string, opts: { cursor?: string; limit?: number }): Promise<TimelinePage> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 50), 5), 200);
  const cursor = opts.cursor ? decodeTimelineCursor(opts.cursor) : null;
  const db = prisma();
  const run = await db.run.findUnique({ where: { id: runId }, select: { teamId: true, path: true } });
  if (!run || run.teamId !== teamId) throw notFound("run");

  // $1 run, $2 team, $3 ancestry, $4 page+1; with a cursor $5 at, $6 kind, $7 key. Every source reads
  // at most one page, newest first, from its own index, below the cursor; the union is cut to one page.
  const params: unknown[] = [runId, teamId, run.path, limit + 1];
  let below = (_kind: string, _at: string, _key: string) => "TRUE";
  if (cursor) {
    params.push(cursor.at, cursor.kind, cursor.key);
    below = (kind, at, key) => `${at} <= $5::timestamptz AND (${at}, '${kind}'::text, ${key}) < ($5::timestamptz, $6, $7)`;
  }
  const dKey = "lpad(d.id::text, 20, '0')";
  const aKey = "lpad(a.id::text, 20, '0')";
  const sql = `
    SELECT kind, at, key, data FROM (
      (SELECT 'decision'::text AS kind, d.at, ${dKey} AS key,
              jsonb_build_object('decision', d.decision, 'reason', d.reason, 'source', d.source, 'operationId', d.operation_id,
                                 'epochSeen', d.epoch_seen, 'currentEpoch', d.current_epoch) AS data
         FROM gate_decisions d
        WHERE d.run_id = $1 AND (d.team_id = $2 OR d.team_id IS NULL) AND ${below("decision", "d.at", dKey)}
        ORDER BY d.at DESC, ${dKey} DESC LIMIT $4)
      UNION ALL
      (SELECT 'operation', o.created_at, o.id,
              jsonb_build_object('tool', o.tool, 'kind', o.kind, 'state', o.state, 'operationId', o.operation_id, 'stateReason', o.state_reason)
         FROM operations o
        WHERE o.run_id = $1 AND o.team_id = $2 AND ${below("operation", "o.created_at", "o.id")}
        ORDER BY o.created_at DESC, o.id DESC LIMIT $4)
      UNION ALL
      (SELECT 'control', a.at, ${aKey},
              jsonb_build_object('action', a.action, 'actor', a.actor, 'after', a.after)
         FROM audit_events a
        WHERE a.team_id = $2 AND a.target = $1 AND ${below("control", "a.at", aKey)}
        ORDER BY a.at DESC, ${aKey} DESC LIMIT $4)
      UNION ALL
      (SELECT 'ack', x.at, x.key, x.data FROM (
          SELECT (e->>'at')::timestamptz AS at, b.id || ':' || lpad(n::text, 4, '0') AS key,
                 jsonb_build_object('meaning', e->>'meaning', 'by', e->>'by', 'barrierId', b.id) AS data
            FROM barriers b
            CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(b.observed_evidence) = 'array' THEN b.observed_evidence ELSE '[]'::jsonb END)
                 WITH ORDINALITY AS ev(e, n)
           WHERE b.team_id = $2 AND b.run_id = ANY ($3::text[]) AND e->>'runId' = $1 AND (e->>'at') IS NOT NULL
          UNION ALL
          SELECT s.provider_responded_at, s.id,
                 jsonb_build_object('providerResponse', s.provider_response, 'operationId', o.operation_id, 'barrierId', s.barrier_id)
            FROM settlements s JOIN operations o ON o.id = s.operation_id
           WHERE o.run_id = $1 AND o.team_id = $2 AND s.provider_responded_at IS NOT NULL
        ) x
        WHERE ${below("ack", "x.at", "x.key")}
        ORDER BY x.at DESC, x.key DESC LIMIT $4)
    ) t
    ORDER BY at DESC, kind DESC, key DESC
    LIMIT $4`;
  const rows = await db.$queryRawUnsafe<Row[]>(sql, ...params);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    runId,
    items: page.map(describe),
    nextCursor: rows.length > limit && last ? encode({ at: last.at.toISOString(), kind: last.kind, key: last.key }) : null,
  };
}
