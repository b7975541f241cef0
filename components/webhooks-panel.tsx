"use client";
// Webhook endpoints (add: the secret is shown once; remove, after a confirmation) and dead letters with
// a retry button. The secret box, list cards, tables and confirmation are the API keys page's (admin-list).
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import {
  createWebhookAction,
  deleteWebhookAction,
  retryWebhookDeliveryAction,
  rotateWebhookSecretAction,
} from "@/app/(console)/webhooks/actions";
import type { WebhookDeliveryView, WebhookEndpointView } from "@/lib/modules/webhooks";
import { EVENT_TYPES } from "@/lib/schemas/event-types";
import { Time } from "./time";
import { AdminTable, ListCard, SecretOnce } from "./admin-list";
import { ConfirmOnItem } from "./reasonless-confirm";
import { FormError } from "./states";

export function WebhooksPanel({
  endpoints,
  dead,
  pendingCount,
}: {
  endpoints: WebhookEndpointView[];
  dead: WebhookDeliveryView[];
  pendingCount: number;
}) {
  const router = useRouter();
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [types, setTypes] = useState<Set<string>>(new Set(EVENT_TYPES));
  const [removing, setRemoving] = useState<WebhookEndpointView | null>(null);

  async function create(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    setBusy(true);
    setError(null);
    const r = await createWebhookAction({ url: String(f.get("url") ?? ""), eventTypes: [...types], secret: String(f.get("secret") ?? "") });
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    setCreated({ url: r.data.url, secret: r.data.secret });
    form.reset();
    router.refresh();
  }
  async function act(p: Promise<{ ok: boolean; message?: string }>) {
    setError(null);
    const r = await p;
    if (!r.ok) setError(r.message ?? "failed");
    router.refresh();
  }

  return (
    <>
      {created ? (
        <SecretOnce
          title={`Signing secret for ${created.url}.`}
          note="Copy it now — it is shown once."
          secret={created.secret}
          testId="new-webhook-secret"
          onDone={() => setCreated(null)}
        />
      ) : null}
      <FormError message={error} />
      <section className="card" aria-labelledby="wh-create-title">
        <h2 id="wh-create-title">Add an endpoint</h2>
        <form onSubmit={create} className="form-grid">
          <label className="field field-grow">
            <span>URL (http or https)</span>
            <input name="url" type="url" required maxLength={2000} placeholder="https://hooks.example.com/quiesce" />
          </label>
          <label className="field">
            <span>Secret (optional; generated if empty)</span>
            <input name="secret" maxLength={200} autoComplete="off" />
          </label>
          <fieldset className="field field-full check-columns">
            <legend>Event types</legend>
            {EVENT_TYPES.map((t) => (
              <label key={t} className="check">
                <input
                  type="checkbox"
                  checked={types.has(t)}
                  onChange={(ev) => {
                    const n = new Set(types);
                    if (ev.target.checked) n.add(t);
                    else n.delete(t);
                    setTypes(n);
                  }}
                />{" "}
                <code>{t}</code>
              </label>
            ))}
          </fieldset>
          <button type="submit" className="btn btn-primary" disabled={busy || types.size === 0}>
            {busy ? "Adding…" : "Add endpoint"}
          </button>
        </form>
      </section>
      <ListCard
        id="wh-list-title"
        title="Endpoints"
        count={endpoints.length}
        after={<> · {pendingCount} waiting to be delivered</>}
        empty={{
          title: "No endpoints",
          body: (
            <>
              Add one above, or with <code>npm run quiesce -- webhooks add</code>.
            </>
          ),
        }}
      >
        <AdminTable label="Webhook endpoints (table)" columns={["URL", "Events", "Added"]} rows={endpoints} rowKey={(e) => e.id}>
          {(e) => (
            <>
              <td className="mono">
                {e.url}
                <div className="sub">{e.id}</div>
              </td>
              <td className="small">{e.eventTypes.join(", ")}</td>
              <td>
                <Time iso={e.createdAt} mode="relative" />
              </td>
              <td>
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={async () => {
                    setError(null);
                    const r = await rotateWebhookSecretAction({ endpointId: e.id });
                    if (!r.ok) {
                      setError(r.message);
                      return;
                    }
                    setCreated({ url: e.url, secret: r.data.secret });
                  }}
                >
                  New secret
                </button>{" "}
                <button type="button" className="btn btn-small btn-danger-outline" onClick={() => setRemoving(e)}>
                  Remove
                </button>
              </td>
            </>
          )}
        </AdminTable>
      </ListCard>
      <ListCard
        id="wh-dead-title"
        title="Dead letters"
        count={dead.length}
        intro="Deliveries that used every retry. Retry puts one back in the queue with the same event id (receivers de-duplicate on it)."
        empty={{ title: "No dead letters", body: "Every event was delivered or is still being retried." }}
      >
        <AdminTable
          columns={["Event", "Run", "Endpoint", "Attempts", "Last error", "Written"]}
          rows={dead}
          rowKey={(d) => d.id}
          testId="dead-letters"
          label="Dead letters (table)"
        >
          {(d) => (
            <>
              <td>
                <code>{d.type}</code>
                <div className="sub mono">{d.eventId}</div>
              </td>
              <td className="mono">{d.runId}</td>
              <td className="mono small">{d.url}</td>
              <td>{d.attempts}</td>
              <td className="small">{d.lastError ?? "—"}</td>
              <td>
                <Time iso={d.createdAt} mode="relative" />
              </td>
              <td>
                <button type="button" className="btn btn-small" onClick={() => act(retryWebhookDeliveryAction({ deliveryId: d.id }))}>
                  Retry
                </button>
              </td>
            </>
          )}
        </AdminTable>
      </ListCard>
      <ConfirmOnItem
        target={removing}
        title={(w) => `Remove endpoint ${w.url}?`}
        body="Nothing more is sent to it; its queued deliveries and dead letters are removed with it. This cannot be undone."
        confirmLabel="Remove endpoint"
        onClose={() => setRemoving(null)}
        act={(w) => deleteWebhookAction({ endpointId: w.id })}
      />
    </>
  );
}
