"use server";
// Webhooks: admins add endpoints (the secret is returned once, to this response only), remove them,
// and put dead letters back in the queue. The same permission as API keys: both hand out secrets.
import { serverAction } from "@/lib/actions/run-action";
import { WebhookDeliveryIdInput, WebhookEndpointIdInput, WebhookFormInput } from "@/lib/schemas/webhooks";
import { createWebhookEndpoint, deleteWebhookEndpoint, retryWebhookDelivery, rotateWebhookSecret } from "@/lib/modules/webhooks";

export const createWebhookAction = serverAction(
  { name: "createWebhook", input: WebhookFormInput, action: "key.manage", revalidate: ["/webhooks"] },
  async ({ session, input }) => {
    const e = await createWebhookEndpoint(session.principal, {
      url: input.url,
      eventTypes: input.eventTypes,
      ...(input.secret ? { secret: input.secret } : {}),
    });
    return { id: e.id, url: e.url, secret: e.secret };
  },
);

export const deleteWebhookAction = serverAction(
  { name: "deleteWebhook", input: WebhookEndpointIdInput, action: "key.manage", revalidate: ["/webhooks"] },
  async ({ session, input }) => {
    await deleteWebhookEndpoint(session.principal, input.endpointId);
    return { id: input.endpointId };
  },
);

export const retryWebhookDeliveryAction = serverAction(
  { name: "retryWebhookDelivery", input: WebhookDeliveryIdInput, action: "key.manage", revalidate: ["/webhooks"] },
  async ({ session, input }) => {
    await retryWebhookDelivery(session.principal, input.deliveryId);
    return { id: input.deliveryId };
  },
);

export const rotateWebhookSecretAction = serverAction(
  { name: "rotateWebhookSecret", input: WebhookEndpointIdInput, action: "key.manage", revalidate: ["/webhooks"] },
  async ({ session, input }) => {
    return rotateWebhookSecret(session.principal, input.endpointId);
  },
);
