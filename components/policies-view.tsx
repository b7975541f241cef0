"use client";
// The Policies page (docs/approvals-console.md#policies): the enabled version's rules in words, spend against each
// budget (live), and every version with its diff. Admins also get the editor (the PolicyDocument as JSON), a dry
// run of any version against past gate decisions, and Enable / Turn off with a reason. Everyone else reads.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { PolicyConsoleView } from "@/lib/modules/policy";
import type { BudgetView, DryRunView, PolicyRuleInput, PolicyVersionView } from "@/lib/schemas/policy";
import { dryRunPolicyAction, enablePolicyAction, savePolicyVersionAction } from "@/app/(console)/policies/actions";
import { DataTable } from "./data-table";
import { PersonName } from "./person";
import { ReasonDialog } from "./reason-dialog";
import { Term } from "./term";
import { Time } from "./time";
import { getJson } from "./providers";
import { EmptyState, FormError, StaleNotice } from "./states";
import { shortId } from "./format";
import { EXAMPLE_POLICY, effectWords, matchWords, ruleWords } from "./policy-words";

const POLICY_URL = "/api/console/policy";
const rulesOf = (v: PolicyVersionView) => v.document.rules as PolicyRuleInput[];

export function PoliciesView({ initial, isAdmin }: { initial: PolicyConsoleView; isAdmin: boolean }) {
  const q = useQuery({ queryKey: ["policy"], queryFn: () => getJson<PolicyConsoleView>(POLICY_URL), initialData: initial });
  const data = q.data;
  const enabled = data.versions.find((v) => v.version === data.enabledVersion) ?? null;
  return (
    <section aria-labelledby="policies-title">
      <div className="page-head">
        <h1 id="policies-title">Policies</h1>
        <p className="muted">
          The team&apos;s <Term id="policy">policy</Term>: rules the gate applies to every call, read at decision time.
          {isAdmin ? null : " Only admins change it; you can read it."}
        </p>
      </div>
      {q.isError ? <StaleNotice error={q.error} /> : null}
      <div className="card" data-section="enabled">
        <div className="card-head">
          <h2>{enabled ? `Enabled: version ${enabled.version}` : "No policy enabled"}</h2>
          {isAdmin && enabled ? <TurnOff /> : null}
        </div>
        {enabled ? (
          <>
            <p className="muted small">
              {enabled.note ? <>“{enabled.note}” · </> : null}
              saved <Time iso={enabled.createdAt} mode="relative" /> by <Who actor={enabled.createdBy} people={data.people} />. The first
              matching allow, deny or approval rule decides; every matching budget counts.
            </p>
            <RulesTable version={enabled} />
          </>
        ) : (
          <p className="muted">The gate decides by authority alone (lifecycle, breaker, lease, epoch).</p>
        )}
      </div>
      <Budgets budgets={data.budgets} />
      <Versions data={data} isAdmin={isAdmin} />
      {isAdmin ? <Editor latest={data.versions[0] ?? null} /> : null}
    </section>
  );
}

function Who({ actor, people }: { actor: string; people: PolicyConsoleView["people"] }) {
  return <PersonName person={people[actor] ?? { actor, userId: null, name: null, email: null }} />;
}

function RulesTable({ version }: { version: PolicyVersionView }) {
  const rules = rulesOf(version);
  const redact = version.document.redactKeys;
  return (
    <>
      {rules.length === 0 ? (
        <p className="muted">No rules: every call the authority allows is allowed.</p>
      ) : (
        <>
          <ol className="rule-words">
            {rules.map((r) => (
              <li key={r.name}>
                <span className="mono">{r.name}</span>: {ruleWords(r)}.
              </li>
            ))}
          </ol>
          <DataTable scrollLabel={`Rules of version ${version.version} (table)`} columns={["#", "Rule", "Matches", "Effect", "Does"]}>
            {rules.map((r, i) => (
              <tr key={r.name} data-rule={r.name}>
                <td>{i + 1}</td>
                <td className="mono">{r.name}</td>
                <td>{matchWords(r)}</td>
                <td className="mono">{r.effect}</td>
                <td className="why">{effectWords(r)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
      <p className="muted small">
        Argument keys approvers never see: {redact.length ? <span className="mono">{redact.join(", ")}</span> : "none"}.
      </p>
    </>
  );
}

const CROSS_WORDS: Record<string, string> = { trip_breaker: "tripped the breaker", pause: "paused the tree", none: "denied" };

function Budgets({ budgets }: { budgets: BudgetView[] }) {
  return (
    <div className="card" data-section="budgets">
      <h2>
        <Term id="budget">Budgets</Term>: spend against each limit
      </h2>
      {budgets.length === 0 ? (
        <EmptyState title="No budgets">The enabled version has no budget rule.</EmptyState>
      ) : (
        <DataTable scrollLabel="Budgets (table)" columns={["Budget", "Scope", "Used", "Held", "Limit", "Crossings"]}>
          {budgets.flatMap((b) => {
            const rows = b.usage.length > 0 ? b.usage : [null];
            return rows.map((u) => {
              const crossings = b.crossings.filter((c) => !u || c.scopeKey === u.scopeKey);
              const used = u?.used ?? 0;
              return (
                <tr key={`${b.name}|${u?.scopeKey ?? ""}`} data-budget={b.name}>
                  <td>
                    <span className="mono">{b.name}</span>
                    <div className="sub">
                      {b.window === "minute" ? "per minute" : "in total"}, per {b.per.replace("_", " ")}; when used up: {b.whenExhausted}
                    </div>
                  </td>
                  <td>{u ? <Scope per={b.per} scopeKey={u.scopeKey} /> : <span className="muted">nothing spent yet</span>}</td>
                  <td>
                    <span data-used>
                      {used} {b.unit}
                    </span>
                    <meter
                      min={0}
                      max={b.limit || 1}
                      value={Math.min(used, b.limit || 1)}
                      aria-label={`${b.name}: ${used} of ${b.limit}`}
                    />
                  </td>
                  <td>
                    <span data-held>{u?.held ?? 0}</span>{" "}
                    <span className="sub">
                      <Term id="reservation">reserved</Term>, not yet reported
                    </span>
                  </td>
                  <td>
                    {b.limit} {b.unit}
                  </td>
                  <td>
                    {crossings.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      <>
                        {crossings.length}× <span className="sub">last {CROSS_WORDS[crossings[0]!.action] ?? crossings[0]!.action}</span>{" "}
                        <Time iso={crossings[0]!.crossedAt} mode="relative" />
                      </>
                    )}
                  </td>
                </tr>
              );
            });
          })}
        </DataTable>
      )}
    </div>
  );
}

function Scope({ per, scopeKey }: { per: BudgetView["per"]; scopeKey: string }) {
  if (per === "run_tree")
    return (
      <>
        tree <Link href={`/runs/${scopeKey}`}>{shortId(scopeKey)}</Link>
      </>
    );
  if (per === "agent") return <span className="mono">agent {scopeKey}</span>;
  return <>the team</>;
}

function Versions({ data, isAdmin }: { data: PolicyConsoleView; isAdmin: boolean }) {
  return (
    <div className="card" data-section="versions">
      <h2>Versions</h2>
      {data.versions.length === 0 ? (
        <EmptyState title="No versions yet">
          {isAdmin ? "Write the first one in the editor below." : "An admin writes the first one."}
        </EmptyState>
      ) : (
        <ol className="plain-list policy-versions">
          {data.versions.map((v) => (
            <li key={v.version} data-version={v.version} className="policy-version">
              <h3>
                Version {v.version} {v.enabled ? <span className="badge tone-ok">enabled</span> : null}
              </h3>
              <div className="sub">
                saved <Time iso={v.createdAt} mode="relative" /> by <Who actor={v.createdBy} people={data.people} />
                {v.note ? <> · “{v.note}”</> : null}
              </div>
              <Diff v={v} />
              <details>
                <summary>Its rules ({rulesOf(v).length})</summary>
                <RulesTable version={v} />
              </details>
              {isAdmin ? (
                <div className="controls">
                  <DryRun version={v.version} />
                  {v.enabled ? null : <EnableButton version={v.version} />}
                </div>
              ) : null}
            </li>
          ))}
        </ol>
      )}
      {data.totalVersions > data.versions.length ? (
        <p className="muted small">Older versions: GET /api/v1/policy/versions/&lt;version&gt;.</p>
      ) : null}
    </div>
  );
}

function Diff({ v }: { v: PolicyVersionView }) {
  const d = v.diff;
  const none = !d.added.length && !d.removed.length && !d.changed.length && !d.redactKeys.added.length && !d.redactKeys.removed.length;
  return (
    <div className="policy-diff" data-diff>
      <span className="muted">{d.against === null ? "First version" : `Against version ${d.against}`}: </span>
      {none ? "no change." : null}
      <ul className="plain-list">
        {d.added.length ? (
          <li data-added>
            <strong>added</strong> <span className="mono">{d.added.join(", ")}</span>
          </li>
        ) : null}
        {d.removed.length ? (
          <li data-removed>
            <strong>removed</strong> <span className="mono">{d.removed.join(", ")}</span>
          </li>
        ) : null}
        {d.changed.map((c) => (
          <li key={c.name} data-changed>
            <strong>changed</strong> <span className="mono">{c.name}</span>: {ruleWords(c.before as PolicyRuleInput)} →{" "}
            {ruleWords(c.after as PolicyRuleInput)}
          </li>
        ))}
        {d.redactKeys.added.length || d.redactKeys.removed.length ? (
          <li>
            <strong>redacted keys</strong>
            {d.redactKeys.added.length ? ` + ${d.redactKeys.added.join(", ")}` : ""}
            {d.redactKeys.removed.length ? ` − ${d.redactKeys.removed.join(", ")}` : ""}
          </li>
        ) : null}
      </ul>
    </div>
  );
}

function DryRun({ version }: { version: number }) {
  const [days, setDays] = useState("7");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<DryRunView | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const r = await dryRunPolicyAction({ version, days: Number(days) });
    setBusy(false);
    if (r.ok) setResult(r.data);
    else {
      setResult(null);
      setError(r.message);
    }
  }
  return (
    <form className="inline-form dry-run" onSubmit={submit} aria-label={`Dry run version ${version}`}>
      <label>
        Days <input type="number" min={1} max={30} value={days} onChange={(e) => setDays(e.target.value)} className="days" required />
      </label>
      <button type="submit" className="btn btn-small" disabled={busy}>
        {busy ? "Replaying…" : "Dry run"}
      </button>
      <div role="status" className="dry-run-result">
        {result ? (
          <>
            Over the last {result.days} {result.days === 1 ? "day" : "days"} ({result.considered} allowed calls
            {result.truncated ? ", the newest only" : ""}), version {result.version}{" "}
            <strong data-dry-run>
              would have held {result.wouldHold} calls, denied {result.wouldDeny}, budget-denied {result.wouldDenyBudget}
            </strong>
            .
            {result.notSimulated.length ? (
              <span className="sub">Not replayed (history has no estimate in their unit): {result.notSimulated.join(", ")}.</span>
            ) : null}
          </>
        ) : null}
      </div>
      <FormError message={error} />
    </form>
  );
}

function useAfterWrite() {
  const client = useQueryClient();
  const router = useRouter();
  return async () => {
    await client.invalidateQueries();
    router.refresh();
  };
}

function EnableButton({ version }: { version: number }) {
  const [open, setOpen] = useState(false);
  const done = useAfterWrite();
  return (
    <>
      <button type="button" className="btn btn-small btn-primary" onClick={() => setOpen(true)}>
        Enable…
      </button>
      <ReasonDialog
        open={open}
        title={`Enable version ${version}`}
        confirmLabel={`Enable version ${version}`}
        onCancel={() => setOpen(false)}
        onConfirm={async (reason) => {
          const r = await enablePolicyAction({ version, reason });
          if (!r.ok) return r.message;
          setOpen(false);
          await done();
          return null;
        }}
      >
        <p>
          The gate reads version {version} from its next decision, for every run of the team. Dry-run it first to see what it would have
          held and denied.
        </p>
      </ReasonDialog>
    </>
  );
}

function TurnOff() {
  const [open, setOpen] = useState(false);
  const done = useAfterWrite();
  return (
    <>
      <button type="button" className="btn btn-small btn-danger-outline" onClick={() => setOpen(true)}>
        Turn off…
      </button>
      <ReasonDialog
        open={open}
        title="Turn the policy off"
        confirmLabel="Turn the policy off"
        danger
        onCancel={() => setOpen(false)}
        onConfirm={async (reason) => {
          const r = await enablePolicyAction({ version: null, reason });
          if (!r.ok) return r.message;
          setOpen(false);
          await done();
          return null;
        }}
      >
        <p>No rule applies from the gate&apos;s next decision: no approvals are asked for and no budget is counted.</p>
      </ReasonDialog>
    </>
  );
}

function Editor({ latest }: { latest: PolicyVersionView | null }) {
  const start = latest ? { rules: latest.document.rules, redactKeys: latest.document.redactKeys, note: "" } : EXAMPLE_POLICY;
  const [text, setText] = useState(() => JSON.stringify(start, null, 2));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<number | null>(null);
  const done = useAfterWrite();
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    const r = await savePolicyVersionAction({ document: text });
    setBusy(false);
    if (!r.ok) {
      setError(`Not saved: ${r.message}`);
      return;
    }
    setSaved(r.data.version);
    await done();
  }
  return (
    <form className="card stack" data-section="editor" onSubmit={submit} aria-labelledby="editor-title">
      <h2 id="editor-title">New version</h2>
      <p className="muted small">
        The whole policy as JSON: <span className="mono">rules</span> (name, tool glob, harness, agent, subtree, effect, approval or
        budget), <span className="mono">redactKeys</span> and a <span className="mono">note</span>. Saving does not enable it.
      </p>
      <label className="field">
        <span>Policy document (JSON)</span>
        <textarea
          className="mono policy-editor"
          rows={16}
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-invalid={error ? true : undefined}
        />
      </label>
      <FormError message={error} />
      <div role="status">
        {saved !== null ? <div className="notice notice-ok">Saved version {saved}. Dry-run it, then enable it.</div> : null}
      </div>
      <div className="controls">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? "Saving…" : "Save as a new version"}
        </button>
      </div>
    </form>
  );
}
