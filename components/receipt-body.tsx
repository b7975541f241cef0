// The §7 receipt body, readable: the decision first, then authority, work, effects, reconciliation
// holders and effect receipts. Field names are the article's, shown as written so a reviewer can match
// the page against the JSON. Unknown extra fields are listed too rather than hidden.
import type { ReactNode } from "react";
import { absTime } from "./format";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const KNOWN = new Set(["barrier_id", "run_id", "authority", "work", "effects", "last_settled_at", "quiet_period_seconds", "verified_at", "decision", "reconciliation", "effect_receipts", "digest"]);

function scalar(v: unknown, key?: string): ReactNode {
  if (v === null || v === undefined) return <span className="muted">—</span>;
  if (typeof v === "string" && key && /_at$/.test(key) && !Number.isNaN(Date.parse(v))) return <time dateTime={v}>{absTime(v)}</time>;
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number" || typeof v === "string") return <span className={typeof v === "string" && /^[a-z]+_[A-Za-z0-9_-]{6,}$/.test(v) ? "mono" : undefined}>{String(v)}</span>;
  if (Array.isArray(v)) return v.length === 0 ? <span className="muted">none</span> : <ArrayTable rows={v} />;
  if (isObj(v)) return <Fields obj={v} />;
  return String(v);
}

function Fields({ obj }: { obj: Obj }) {
  return (
    <dl className="fields">
      {Object.entries(obj).map(([k, v]) => (
        <div key={k} className="field-row"><dt className="mono">{k}</dt><dd>{scalar(v, k)}</dd></div>
      ))}
    </dl>
  );
}

function ArrayTable({ rows }: { rows: unknown[] }) {
  if (!rows.every(isObj)) return <ul className="plain-list">{rows.map((r, i) => <li key={i}>{scalar(r)}</li>)}</ul>;
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r as Obj)))];
  return (
    <div className="table-wrap">
      <table className="table compact">
        <thead><tr>{cols.map((c) => <th key={c} scope="col" className="mono">{c}</th>)}</tr></thead>
        <tbody>{rows.map((r, i) => <tr key={i}>{cols.map((c) => <td key={c}>{scalar((r as Obj)[c], c)}</td>)}</tr>)}</tbody>
      </table>
    </div>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = `receipt-${title.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  return <section className="receipt-section" aria-labelledby={id}><h2 id={id}>{title}</h2>{children}</section>;
}

export function ReceiptBody({ body }: { body: Obj }) {
  const effects = isObj(body.effects) ? body.effects : {};
  const unknown = Number(effects.unknown ?? 0);
  const extra = Object.fromEntries(Object.entries(body).filter(([k]) => !KNOWN.has(k)));
  const recon = Array.isArray(body.reconciliation) ? body.reconciliation : [];
  return (
    <div className="receipt-body">
      <div className="receipt-grid">
        <Section title="Authority">{isObj(body.authority) ? <Fields obj={body.authority} /> : scalar(body.authority)}</Section>
        <Section title="Work">{isObj(body.work) ? <Fields obj={body.work} /> : scalar(body.work)}</Section>
        <Section title="Effects">
          {isObj(body.effects) ? <Fields obj={body.effects} /> : scalar(body.effects)}
          {unknown > 0 ? <p className="text-danger small">{unknown} outcome{unknown === 1 ? " is" : "s are"} unknown: nobody can yet say whether the effect happened.</p> : null}
        </Section>
        <Section title="Timing">
          <Fields obj={{ last_settled_at: body.last_settled_at, quiet_period_seconds: body.quiet_period_seconds, verified_at: body.verified_at }} />
        </Section>
      </div>
      <Section title="Reconciliation">
        {recon.length === 0 ? <p className="muted">Nothing to reconcile.</p> : <ArrayTable rows={recon} />}
      </Section>
      <Section title="Effect receipts">
        {Array.isArray(body.effect_receipts) && body.effect_receipts.length > 0 ? <ArrayTable rows={body.effect_receipts} /> : <p className="muted">No effect completed: nothing to roll back.</p>}
      </Section>
      {Object.keys(extra).length > 0 ? <Section title="Other fields"><Fields obj={extra} /></Section> : null}
    </div>
  );
}

export function decisionSentence(decision: string, body: Obj): string {
  if (decision === "stopped_and_quiet") return "Stopped and quiet: nothing pending, nothing unknown, no active lease. Every in-flight call was settled against its provider and the quiet period passed with no activity.";
  const recon = Array.isArray(body.reconciliation) ? body.reconciliation.length : 0;
  return `Stop incomplete: the run can no longer act, but ${recon ? `${recon} outcome${recon === 1 ? " is" : "s are"} still being reconciled by the people named below` : "the barrier could not prove every effect"}. A new version of this receipt is issued when that is resolved.`;
}
