// The stop receipt (docs/architecture.md#the-stop-receipt) at a stable link for review packets: /receipts/<barrierId>, or
// /receipts/<barrierId>?version=n for one version. Readable by every member (viewer included),
// printable, downloadable as JSON and YAML; the digest is recomputed on the server on every view.
import { Term } from "@/components/term";
import Link from "next/link";
import { requireSession } from "@/lib/modules/sessions";
import { getConsoleReceipt, receiptBarrier } from "@/lib/modules/stop";
import { orNotFound } from "@/lib/actions/not-found";
import { actorLabels, peopleOf } from "@/lib/modules/members";
import { ReceiptVersionQuery } from "@/lib/schemas/console";
import { ReceiptDecisionBadge, PhaseBadge } from "@/components/badges";
import { ReceiptBody } from "@/components/receipt-body";
import { openItems, receiptHeadline } from "@/lib/control/receipt-headline";

import { CopyLink, PrintButton, ReceiptWatcher } from "@/components/receipt-tools";
import { Time } from "@/components/time";
import { EmptyState } from "@/components/states";

export const metadata = { title: "Stop receipt" };

export default async function ReceiptPage({
  params,
  searchParams,
}: {
  params: Promise<{ barrierId: string }>;
  searchParams: Promise<{ version?: string }>;
}) {
  const s = await requireSession();
  const { barrierId } = await params;
  const v = ReceiptVersionQuery.safeParse(await searchParams);
  const version = v.success ? v.data.version : undefined;
  const r = await orNotFound(() => getConsoleReceipt(s.principal, barrierId, version));
  if (!r) {
    const b = await orNotFound(() => receiptBarrier(s.principal, barrierId));
    return (
      <article>
        <ReceiptWatcher barrierId={barrierId} latestVersion={null} auto />
        <EmptyState title="No receipt yet">
          <p>
            The barrier is still working (<PhaseBadge value={b.phase} />
            ). This page shows the receipt as soon as it is issued.
          </p>
          <p>
            <Link href={`/barriers/${barrierId}`}>Watch the stop ladder</Link>
          </p>
        </EmptyState>
      </article>
    );
  }
  const q = version ? `?version=${r.version}` : "";
  const reconActors = (Array.isArray(r.body.reconciliation) ? r.body.reconciliation : []).map((x) =>
    typeof x === "object" && x !== null ? String((x as Record<string, unknown>).assignee ?? "") : "",
  );
  const actors = [
    ...Object.values(r.body).filter((v): v is string => typeof v === "string" && /^(user|key|system):/.test(v)),
    ...reconActors,
  ];
  const labels = await actorLabels(s.principal, actors);
  const people = await peopleOf(s.principal, actors);
  const name = (a: string) => {
    const p = people.get(a);
    return p?.email ? (p.name ? `${p.name} <${p.email}>` : p.email) : (labels[a] ?? a);
  };
  const open = openItems(r.body, name);
  const isLatest = r.version === r.latestVersion;
  return (
    <article className="receipt" aria-labelledby="receipt-title">
      <ReceiptWatcher barrierId={barrierId} latestVersion={r.latestVersion} auto={!version} />
      <nav className="crumbs no-print" aria-label="Breadcrumb">
        <Link href={`/runs/${r.runId}`}>Run</Link> / <Link href={`/barriers/${barrierId}`}>Barrier</Link> / receipt
      </nav>
      <header className="receipt-head">
        <div>
          <p className="eyebrow">
            Stop <Term id="receipt">receipt</Term> · version {r.version} of {r.latestVersion} ·{" "}
            <Term id={r.decision === "stopped_and_quiet" ? "stopped-and-quiet" : "stop-incomplete"}>what the decision means</Term>
          </p>
          <h1 id="receipt-title">
            <ReceiptDecisionBadge value={r.decision} large />
          </h1>
          <p className="lead" data-testid="receipt-answer">
            {receiptHeadline(r.decision, r.body, name)}
          </p>
          {open.length > 0 ? (
            <section aria-labelledby="open-title" className="card">
              <h2 id="open-title">Still open</h2>
              <ul>
                {open.map((o) => (
                  <li key={o.operationId}>
                    {o.tool ? <code>{o.tool}</code> : null} <span className="mono">{o.operationId}</span>:{" "}
                    <Term id="reconciliation">outcome unknown</Term>, owned by {o.owner} — <Link href="/reconciliations">record it</Link>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
          <dl className="fields inline">
            <div className="field-row">
              <dt>barrier</dt>
              <dd className="mono">{barrierId}</dd>
            </div>
            <div className="field-row">
              <dt>run</dt>
              <dd className="mono">
                <Link href={`/runs/${r.runId}`}>{r.runId}</Link>
              </dd>
            </div>
            <div className="field-row">
              <dt>verified</dt>
              <dd>
                <Time iso={r.verifiedAt} />
              </dd>
            </div>
            <div className="field-row">
              <dt>issued</dt>
              <dd>
                <Time iso={r.createdAt} />
              </dd>
            </div>
          </dl>
        </div>
        <div className="receipt-actions no-print">
          <a className="btn" href={`/receipts/${barrierId}/receipt.json${q}`} download>
            Download JSON
          </a>
          <a className="btn" href={`/receipts/${barrierId}/receipt.yaml${q}`} download>
            Download YAML
          </a>
          {r.envelope ? (
            <a className="btn" href={`/receipts/${barrierId}/receipt.dsse.json${q}`} download>
              Download signed envelope
            </a>
          ) : null}
          <PrintButton />
        </div>
      </header>
      {!isLatest ? (
        <div className="notice notice-warn" role="status">
          This is an older version. <Link href={`/receipts/${barrierId}`}>The latest is version {r.latestVersion}</Link>.
        </div>
      ) : null}

      <section className={`digest ${r.check.ok ? "digest-ok" : "digest-bad"}`} aria-labelledby="digest-title">
        <h2 id="digest-title">{r.check.ok ? "✓ Digest verified" : "✗ Digest does NOT verify"}</h2>
        <p className="mono digest-value" aria-label="sha256 digest">
          sha256:{r.digest}
        </p>
        <p className={r.signature.valid ? "signature-ok" : "signature-bad"} data-testid="receipt-signature">
          {r.signature.valid ? (
            <>
              ✓ signature valid (key <span className="mono">{r.signature.keyId}</span>)
            </>
          ) : (
            <>✗ signature not valid: {r.signature.detail}</>
          )}
        </p>
        <p className="small">
          {r.check.detail} (recomputed on the server when this page was rendered
          {r.check.ok ? "" : `; recomputed: ${r.check.recomputed}`}).
        </p>
        <details>
          <summary>Check it yourself</summary>
          <p className="small">
            The digest is sha256 over the canonical JSON of the body without its <code>digest</code> member: object keys sorted, no
            whitespace. The exact text:
          </p>
          <pre className="canonical">{r.canonical}</pre>
          <p className="small">
            Save it as a file with no trailing newline and run <code>sha256sum</code> on it: the result must equal the digest above.
          </p>
          <p className="small">
            The signature: download the signed envelope and the public key (<code>/.well-known/quiesce/keys.json</code>), then run{" "}
            <code>npm run quiesce -- verify stop-receipt-….dsse.json --keys keys.json</code> — offline.
          </p>
        </details>
      </section>

      <ReceiptBody body={r.body} labels={labels} />

      <section className="card no-print" aria-labelledby="link-title">
        <h2 id="link-title">Stable link</h2>
        <p className="small muted">
          Paste this into a review packet. It always shows the latest version; add <code>?version=n</code> to pin one.
        </p>
        <CopyLink path={`/receipts/${barrierId}${q}`} />
      </section>

      <section className="card" aria-labelledby="versions-title">
        <h2 id="versions-title">Versions</h2>
        <ol className="plain-list versions" reversed>
          {[...r.versions].reverse().map((x) => (
            <li key={x.version} aria-current={x.version === r.version ? "true" : undefined}>
              {x.version === r.version ? (
                <strong>version {x.version}</strong>
              ) : (
                <Link href={`/receipts/${barrierId}?version=${x.version}`}>version {x.version}</Link>
              )}{" "}
              <ReceiptDecisionBadge value={x.decision} /> issued <Time iso={x.verifiedAt} />{" "}
              <span className="mono small muted">{x.digest.slice(0, 16)}…</span>
            </li>
          ))}
        </ol>
      </section>
    </article>
  );
}
