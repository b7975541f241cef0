// The receipt body, readable: authority, work, effects, timing, reconciliation holders, the in-flight
// calls and how each settled, effect receipts. Field names and values are shown as written (as code) so a
// reviewer can match the page against the JSON, a state with its word beside it; unknown extra fields are listed.
import type { ReactNode } from "react";
import { Time } from "./time";
import { TableScroll } from "./table-scroll";
import { ReceiptEnvironment } from "./environment";
import { DECISION_WORDS, FIELD_STATE_WORDS } from "@/lib/control/stop-words";

type Obj = Record<string, unknown>;
/** Actor strings ("user:…") resolved to people for the reader; the canonical value stays visible. */
type Labels = Record<string, string>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const KNOWN = new Set([
  "barrier_id",
  "run_id",
  "authority",
  "work",
  "effects",
  "last_settled_at",
  "quiet_period_seconds",
  "quiet_until",
  "verified_at",
  "decision",
  "reconciliation",
  "effect_receipts",
  "digest",
  "in_flight",
  "summary",
  "human_settlements",
  "claims_not_verified",
  "environment",
]);

function scalar(v: unknown, labels: Labels, key?: string): ReactNode {
  if (v === null || v === undefined) return <span className="muted">—</span>;
  if (typeof v === "string" && labels[v] && labels[v] !== v)
    return (
      <span>
        {labels[v]} (<code className="muted mono small">{v}</code>)
      </span>
    );
  if (typeof v === "string" && key && /_at$/.test(key) && !Number.isNaN(Date.parse(v))) return <Time iso={v} mode="absolute" />;
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "string" && key && FIELD_STATE_WORDS[key] && Object.hasOwn(FIELD_STATE_WORDS[key], v))
    return (
      <span data-state={v}>
        {FIELD_STATE_WORDS[key][v]} <code className="muted small">{v}</code>
      </span>
    );
  // An identifier or a value as written in the JSON: code, never page prose.
  if (typeof v === "string" && v.includes("_")) return <code className="mono">{v}</code>;
  if (typeof v === "number" || typeof v === "string") return <span>{String(v)}</span>;
  if (Array.isArray(v))
    return v.length === 0 ? (
      <span className="muted">none</span>
    ) : (
      <ArrayTable rows={v} labels={labels} label={key ? `${key.replaceAll("_", " ")} (table)` : "Table"} />
    );
  if (isObj(v)) return <Fields obj={v} labels={labels} />;
  return String(v);
}

/** Inside a table cell a nested object reads better as short "key value" lines than as a table. */
function cell(v: unknown, labels: Labels, key: string): ReactNode {
  if (isObj(v)) {
    return (
      <span className="kv">
        {Object.entries(v).map(([k, x]) => (
          <span key={k}>
            <span className="muted">{k.replaceAll("_", " ")}</span>{" "}
            {isObj(x) || Array.isArray(x) ? <code className="json">{JSON.stringify(x)}</code> : scalar(x, labels, k)}
          </span>
        ))}
      </span>
    );
  }
  if (Array.isArray(v)) return <code className="json">{JSON.stringify(v)}</code>;
  return scalar(v, labels, key);
}

function Fields({ obj, labels }: { obj: Obj; labels: Labels }) {
  return (
    <dl className="fields">
      {Object.entries(obj).map(([k, v]) => (
        <div key={k} className="field-row">
          <dt>
            <code className="mono">{k}</code>
          </dt>
          <dd>{scalar(v, labels, k)}</dd>
        </div>
      ))}
    </dl>
  );
}

function ArrayTable({ rows, labels, label = "Table" }: { rows: unknown[]; labels: Labels; label?: string }) {
  if (!rows.every(isObj))
    return (
      <ul className="plain-list">
        {rows.map((r, i) => (
          <li key={i}>{scalar(r, labels)}</li>
        ))}
      </ul>
    );
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r as Obj)))];
  return (
    <TableScroll label={label}>
      <table className="table compact">
        <thead>
          <tr>
            {cols.map((c) => (
              <th key={c} scope="col">
                <code className="mono">{c}</code>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {cols.map((c) => (
                <td key={c}>{cell((r as Obj)[c], labels, c)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** A signed sentence as a person reads it: each actor it names (`user:…`, `key:…`) by its label; the download keeps the ids. */
function withNames(text: string, labels: Labels): string {
  return Object.entries(labels)
    .filter(([actor, label]) => label && label !== actor)
    .sort((x, y) => y[0].length - x[0].length)
    .reduce((t, [actor, label]) => t.replaceAll(actor, label), text);
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = `receipt-${title.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  return (
    <section className="receipt-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function ReceiptBody({ body, labels = {} }: { body: Obj; labels?: Labels }) {
  const effects = isObj(body.effects) ? body.effects : {};
  const unknown = Number(effects.unknown ?? 0);
  const extra = Object.fromEntries(Object.entries(body).filter(([k]) => !KNOWN.has(k)));
  // A resolved reconciliation keeps its cause (why it was unknown) and shows who resolved it and when,
  // joined from the receipt's own human_settlements on operation_id (nothing the JSON does not say).
  const settledBy = new Map(
    (Array.isArray(body.human_settlements) ? body.human_settlements : []).filter(isObj).map((h) => [h.operation_id, h] as const),
  );
  const recon = (Array.isArray(body.reconciliation) ? body.reconciliation : []).map((r) => {
    const h = isObj(r) && r.status === "resolved" ? settledBy.get(r.operation_id) : undefined;
    return h ? { ...(r as Obj), resolved_by: h.by ?? null, resolved_at: h.at ?? null } : r;
  });
  const obj = (v: unknown) => (isObj(v) ? <Fields obj={v} labels={labels} /> : scalar(v, labels));
  return (
    <div className="receipt-body">
      <div className="receipt-grid">
        <Section title="Authority">{obj(body.authority)}</Section>
        <Section title="Work">{obj(body.work)}</Section>
        <Section title="Effects">
          {obj(body.effects)}
          {unknown > 0 ? (
            <p className="text-danger small">
              {unknown} outcome{unknown === 1 ? " is" : "s are"} unknown: nobody can yet say whether the effect happened.
            </p>
          ) : null}
        </Section>
        <Section title="Timing">
          <Fields
            obj={{
              last_settled_at: body.last_settled_at,
              quiet_period_seconds: body.quiet_period_seconds,
              quiet_until: body.quiet_until,
              verified_at: body.verified_at,
            }}
            labels={labels}
          />
        </Section>
      </div>
      {Array.isArray(body.summary) && body.summary.length > 0 ? (
        <Section title="Summary">
          <ul className="plain-list">
            {(body.summary as unknown[]).map((x, i) => (
              <li key={i}>{withNames(String(x), labels)}</li>
            ))}
          </ul>
        </Section>
      ) : null}
      <Section title="Reconciliation">
        {recon.length === 0 ? (
          <p className="muted">Nothing to reconcile.</p>
        ) : (
          <ArrayTable rows={recon} labels={labels} label="Outcomes to reconcile (table)" />
        )}
      </Section>
      <Section title="In-flight calls of the subtree">
        {Array.isArray(body.in_flight) && body.in_flight.length > 0 ? (
          <ArrayTable rows={body.in_flight} labels={labels} label="In-flight calls of the subtree (table)" />
        ) : (
          <p className="muted">Nothing was in flight anywhere in the subtree.</p>
        )}
      </Section>
      {Array.isArray(body.human_settlements) && body.human_settlements.length > 0 ? (
        <Section title="Settled by a person">
          <ArrayTable rows={body.human_settlements} labels={labels} label="Settled by a person (table)" />
        </Section>
      ) : null}
      {Array.isArray(body.claims_not_verified) && body.claims_not_verified.length > 0 ? (
        <Section title="Claimed after the stop (not verified)">
          <p className="muted">
            What the agents reported after the stop. A claim settles nothing: the provider&apos;s check or a person does.
          </p>
          <ArrayTable rows={body.claims_not_verified} labels={labels} label="Claimed after the stop (table)" />
        </Section>
      ) : null}
      {Array.isArray(body.environment) && body.environment.length > 0 ? (
        <Section title="Environment">
          <ReceiptEnvironment entries={body.environment.filter(isObj) as Parameters<typeof ReceiptEnvironment>[0]["entries"]} />
        </Section>
      ) : null}
      <Section title="Effect receipts">
        {Array.isArray(body.effect_receipts) && body.effect_receipts.length > 0 ? (
          <ArrayTable rows={body.effect_receipts} labels={labels} label="Effect receipts (table)" />
        ) : (
          <p className="muted">
            {unknown > 0
              ? "No effect receipt recorded — but an outcome is unknown, so nothing is claimed about rollback."
              : "No effect receipt recorded."}
          </p>
        )}
      </Section>
      {Object.keys(extra).length > 0 ? (
        <Section title="Other fields">
          <Fields obj={extra} labels={labels} />
        </Section>
      ) : null}
    </div>
  );
}

/** The decision in words: the evidence model's own last sentence (never a constant that could disagree). */
export function decisionSentence(decision: string, body: Obj): string {
  const summary = Array.isArray(body.summary) ? body.summary.map(String) : [];
  const last = summary.at(-1);
  if (last) return last;
  // A receipt issued before the evidence model carried no sentences: state only the decision.
  return decision === "stopped_and_quiet"
    ? `${DECISION_WORDS.stopped_and_quiet}.`
    : `${DECISION_WORDS.stop_incomplete}: a new version of this receipt is issued when the open items are resolved.`;
}
