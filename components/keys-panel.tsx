"use client";
// API keys: create one (its secret is shown exactly once, here) and revoke. Machine kinds (agent,
// worker, gateway) can only read and ask the gate; an operator key carries its user's current role.
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { createKeyAction, revokeKeyAction } from "@/app/(console)/keys/actions";
import type { ApiKeyView } from "@/lib/modules/keys";
import type { Member } from "@/lib/modules/stop";
import { Time } from "./time";
import { AdminTable, ListCard, SecretOnce } from "./admin-list";
import { ConfirmOnItem } from "./reasonless-confirm";
import { FormError } from "./states";

const KIND_HELP: Record<string, string> = {
  agent: "a harness or agent process: registers runs, asks the gate, reports effects",
  worker: "a queue worker: admits jobs at dequeue, heartbeats, reports",
  gateway: "an MCP or tool gateway: registers runs, asks the gate",
  operator: "a person's CLI key: exactly that member's current role",
};

export function KeysPanel({ keys, members, me }: { keys: ApiKeyView[]; members: Member[]; me: string }) {
  const router = useRouter();
  const [kind, setKind] = useState("agent");
  const [created, setCreated] = useState<{ name: string; kind: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);
  const names = new Map(members.map((m) => [m.id, m.email]));

  async function create(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const r = await createKeyAction({
      name: String(f.get("name") ?? ""),
      kind,
      userId: kind === "operator" ? String(f.get("userId") ?? "") : "",
      expiresInDays: String(f.get("expiresInDays") ?? ""),
    });
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    setCreated(r.data);
    (e.target as HTMLFormElement).reset();
    router.refresh();
  }

  return (
    <>
      {created ? (
        <SecretOnce
          title={`New ${created.kind} key “${created.name}”.`}
          note="Copy the secret now — it is shown once and stored only as a hash."
          secret={created.secret}
          testId="new-key-secret"
          onDone={() => setCreated(null)}
        />
      ) : null}
      <section className="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a key</h2>
        <form onSubmit={create} className="form-grid">
          <label className="field">
            <span>Name</span>
            <input name="name" required maxLength={100} placeholder="e.g. build-agent-fleet" />
          </label>
          <label className="field">
            <span>Kind</span>
            <select name="kind" value={kind} onChange={(e) => setKind(e.target.value)}>
              {Object.keys(KIND_HELP).map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
          {kind === "operator" ? (
            <label className="field">
              <span>For member</span>
              <select name="userId" defaultValue={me}>
                {members.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.email} ({m.role})
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label className="field">
            <span>Expires in (days, optional)</span>
            <input name="expiresInDays" type="number" min={1} max={3650} />
          </label>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? "Creating…" : "Create key"}
          </button>
        </form>
        <p className="small muted">
          {kind}: {KIND_HELP[kind]}
        </p>
        <FormError message={error} />
      </section>
      <ListCard
        id="keys-title"
        title="Keys"
        count={keys.length}
        empty={{
          title: "No keys yet",
          body: (
            <>
              Create one above; agents and workers use it as <code>QUIESCE_API_KEY</code>.
            </>
          ),
        }}
      >
        <AdminTable
          columns={["Name", "Kind", "Member", "Created", "Expires", "Last used", "Status"]}
          rows={keys}
          rowKey={(k) => k.id}
          label="API keys (table)"
          rowClassName={(k) => (k.status !== "active" ? "row-dim" : undefined)}
        >
          {(k) => (
            <>
              <td>
                {k.name}
                <div className="sub mono">{k.id}</div>
              </td>
              <td>{k.kind}</td>
              <td>{k.userId ? (names.get(k.userId) ?? k.userId) : "—"}</td>
              <td>
                <Time iso={k.createdAt} mode="relative" />
              </td>
              <td>
                <Time iso={k.expiresAt} mode="relative" empty="never" />
              </td>
              <td>
                <Time iso={k.lastUsedAt} mode="relative" empty="never" />
              </td>
              <td>
                {k.revokedAt ? (
                  <span className="text-danger">
                    revoked <Time iso={k.revokedAt} mode="relative" />
                  </span>
                ) : k.status === "expired" ? (
                  <span className="text-danger">
                    expired <Time iso={k.expiresAt} mode="relative" />
                  </span>
                ) : (
                  "active"
                )}
              </td>
              <td>
                {k.revokedAt ? null : (
                  <button type="button" className="btn btn-small btn-danger-outline" onClick={() => setRevoking(k)}>
                    Revoke
                  </button>
                )}
              </td>
            </>
          )}
        </AdminTable>
      </ListCard>
      <ConfirmOnItem
        target={revoking}
        title={(k) => `Revoke key “${k.name}”?`}
        body="Every request made with this key is refused from the next call on. This cannot be undone."
        confirmLabel="Revoke key"
        onClose={() => setRevoking(null)}
        act={(k) => revokeKeyAction({ keyId: k.id })}
      />
    </>
  );
}
