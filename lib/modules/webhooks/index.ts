import "server-only";

export { EVENT_TYPES } from "./events";
export {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  retryWebhookDelivery,
  rotateWebhookSecret,
  type WebhookDeliveryView,
  type WebhookEndpointView,
} from "./webhooks";
export { runWebhookWorker } from "./worker";
