// The team's audit log: every control write, who made it, before and after, newest first; filterable.
// Plain GET form and links, so it works (and is bookmarkable) without client code.
import Link from "next/link";
import { requireSession } from "@/lib/modules/sessions";
import { requirePage } from "@/lib/actions/forbidden";
import { checkAuditChain, listConsoleAudit } from "@/lib/modules/audit";
import { actorLabels } from "@/lib/modules/members";
import { AuditQuery } from "@/lib/schemas/console";
import { Time } from "@/components/time";
import { EmptyState } from "@/components/states";
import { TableScroll } from "@/components/table-scroll";

export const metadata = { title: "Audit log" };

/** Before/after as short key–value pairs; the full JSON is on hover. */
function Json({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  const full = JSON.stringify(value);
  if (typeof value !== "object" || Array.isArray(value))
    return (
      <code className="json" title={full}>
        {full.length > 80 ? `${full.slice(0, 80)}…` : full}
      </code>
    );
  const entries = Object.entries(value as Record<string, unknown>);
  return (
    <span className="audit-kv" title={full}>
      {entries.slice(0, 6).map(([k, v]) => {
        const text = typeof v === "string" ? v : JSON.stringify(v);
        return (
          <span key={k}>
            <span className="k">{k}</span> <code>{text.length > 40 ? `${text.slice(0, 40)}…` : text}</code>
          </span>
        );
      })}
      {entries.length > 6 ? <span className="muted">+{entries.length - 6} more</span> : null}
    </span>
  );
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const s = await requireSession();
  // The nav hides this page from roles without audit.read; the page refuses them too.
  requirePage(s.principal.role, "/audit");
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const parsed = AuditQuery.safeParse(raw);
  const f = parsed.success ? parsed.data : {};
  const [data, broken] = await Promise.all([listConsoleAudit(s.principal, f), checkAuditChain(s.principal)]);
  const labels = await actorLabels(
    s.principal,
    data.items.map((i) => i.actor),
  );
  const link = (page: number) => {
    const u = new URLSearchParams();
    for (const k of ["action", "actor", "target"] as const) if (f[k]) u.set(k, f[k]!);
    if (page > 1) u.set("page", String(page));
    return `/audit${u.size ? `?${u}` : ""}`;
  };
  const filtered = Boolean(f.action || f.actor || f.target);
  return (
    <section aria-labelledby="audit-title">
      <div className="page-head">
        <h1 id="audit-title">Audit log</h1>
        <p className="muted">
          {data.total} event{data.total === 1 ? "" : "s"}
          {filtered ? " match" : ""}. Append-only; each row carries the hash of the one before.
        </p>
      </div>
      {broken === null ? (
        <div className="notice notice-ok" role="status">
          ✓ Hash chain intact for this team.
        </div>
      ) : (
        <div className="notice notice-error" role="alert">
          ✗ Hash chain broken at event #{broken}: a row was altered or removed.
        </div>
      )}
      <form method="get" action="/audit" className="toolbar" role="search">
        <label className="select">
          <span>Action</span>
          <select name="action" defaultValue={f.action ?? ""}>
            <option value="">any</option>
            {data.actions.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label className="select">
          <span>Actor</span>
          <input name="actor" defaultValue={f.actor ?? ""} placeholder="e-mail, user id, key id…" />
        </label>
        <label className="select">
          <span>Target</span>
          <input name="target" defaultValue={f.target ?? ""} placeholder="run id, key id…" />
        </label>
        <button className="btn" type="submit">
          Filter
        </button>
        {filtered ? (
          <Link className="btn btn-ghost" href="/audit">
            Clear
          </Link>
        ) : null}
      </form>
      {data.items.length === 0 ? (
        <EmptyState title={filtered ? "No events match" : "No audit events yet"}>
          Control writes (pause, resume, kill, breaker, reconciliation, keys) are recorded here.
        </EmptyState>
      ) : (
        <TableScroll label="Audit events (table)">
          <table className="table compact">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">At</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((e) => (
                <tr key={e.id}>
                  <td className="num mono" title={`hash ${e.hash}`}>
                    {e.id}
                  </td>
                  <td>
                    <Time iso={e.at} />
                  </td>
                  <td title={e.actor}>{labels[e.actor] ?? e.actor}</td>
                  <td className="mono">{e.action}</td>
                  <td className="mono">
                    {e.target.startsWith("run_") ? (
                      <Link href={`/runs/${e.target}`}>{e.target}</Link>
                    ) : e.target.startsWith("stop_") ? (
                      <Link href={`/barriers/${e.target}`}>{e.target}</Link>
                    ) : (
                      e.target
                    )}
                  </td>
                  <td>
                    <Json value={e.before} />
                  </td>
                  <td>
                    <Json value={e.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {data.pages > 1 ? (
        <nav className="pager" aria-label="Pages">
          {data.page > 1 ? (
            <Link className="btn btn-small" href={link(data.page - 1)}>
              ← Newer
            </Link>
          ) : (
            <span />
          )}
          <span>
            Page {data.page} of {data.pages}
          </span>
          {data.page < data.pages ? (
            <Link className="btn btn-small" href={link(data.page + 1)}>
              Older →
            </Link>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </section>
  );
}
