import { requireSession } from "@/lib/modules/sessions";
import { requirePage } from "@/lib/actions/forbidden";
import { listWebhookDeliveries, listWebhookEndpoints } from "@/lib/modules/webhooks";
import { WebhooksPanel } from "@/components/webhooks-panel";

export const metadata = { title: "Webhooks" };
export const dynamic = "force-dynamic";

export default async function WebhooksPage() {
  const s = await requireSession();
  requirePage(s.principal.role, "/webhooks");
  const [endpoints, dead, pending] = await Promise.all([
    listWebhookEndpoints(s.principal),
    listWebhookDeliveries(s.principal, "dead"),
    listWebhookDeliveries(s.principal, "pending"),
  ]);
  return (
    <section aria-labelledby="webhooks-page-title">
      <div className="page-head">
        <h1 id="webhooks-page-title">Webhooks</h1>
        <p className="muted">
          Stop events of team <strong>{s.team.name}</strong> as CloudEvents 1.0 (structured JSON), signed with HMAC-SHA256 in the{" "}
          <code>quiesce-signature</code> header, delivered at least once and in order per run.
        </p>
      </div>
      <WebhooksPanel endpoints={endpoints} dead={dead} pendingCount={pending.length} />
    </section>
  );
}
