"use client";
// Webhook endpoints (add: the secret is shown once; remove) and dead letters with a retry button.
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import {
  createWebhookAction,
  deleteWebhookAction,
  retryWebhookDeliveryAction,
  rotateWebhookSecretAction,
} from "@/app/(console)/webhooks/actions";
import type { WebhookDeliveryView, WebhookEndpointView } from "@/lib/dal/webhooks";
import { EVENT_TYPES } from "@/lib/integrations/event-types";
import { Time } from "./time";
import { EmptyState } from "./states";

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
        <div className="secret-box" role="alert">
          <strong>Signing secret for {created.url}.</strong> Copy it now — it is shown once.
          <div className="secret-row">
            <code className="mono secret" data-testid="new-webhook-secret">
              {created.secret}
            </code>
            <button type="button" className="btn btn-small btn-ghost" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      {error ? (
        <div className="notice notice-error" role="alert">
          {error}
        </div>
      ) : null}
      <section className="card" aria-labelledby="wh-create-title">
        <h2 id="wh-create-title">Add an endpoint</h2>
        <form onSubmit={create} className="form-grid">
          <label className="field">
            <span>URL (http or https)</span>
            <input name="url" type="url" required maxLength={2000} placeholder="https://hooks.example.com/quiesce" />
          </label>
          <label className="field">
            <span>Secret (optional; generated if empty)</span>
            <input name="secret" maxLength={200} autoComplete="off" />
          </label>
          <fieldset className="field">
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
      <section className="card" aria-labelledby="wh-list-title">
        <h2 id="wh-list-title">
          Endpoints <span className="muted">({endpoints.length})</span> · {pendingCount} waiting to be delivered
        </h2>
        {endpoints.length === 0 ? (
          <EmptyState title="No endpoints">
            Add one above, or with <code>npm run quiesce -- webhooks add</code>.
          </EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="table compact">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((e) => (
                  <tr key={e.id}>
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
                      <button
                        type="button"
                        className="btn btn-small btn-danger-outline"
                        onClick={() => act(deleteWebhookAction({ endpointId: e.id }))}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="card" aria-labelledby="wh-dead-title">
        <h2 id="wh-dead-title">
          Dead letters <span className="muted">({dead.length})</span>
        </h2>
        <p className="small muted">
          Deliveries that used every retry. Retry puts one back in the queue with the same event id (receivers de-duplicate on it).
        </p>
        {dead.length === 0 ? (
          <EmptyState title="No dead letters">Every event was delivered or is still being retried.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="table compact" data-testid="dead-letters">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Run</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Written</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {dead.map((d) => (
                  <tr key={d.id}>
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
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
