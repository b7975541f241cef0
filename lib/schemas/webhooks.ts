// Webhook endpoint input (console form, CLI): zod at the boundary; the URL rules themselves are
// lib/modules/webhooks/events.refuseEndpointUrl (it needs the deployment's own origins) and, on the resolved
// addresses, lib/modules/webhooks/target.checkWebhookTarget.
import { z } from "zod";
import { EVENT_TYPES } from "./event-types";

export const EventTypeList = z.array(z.union([z.enum(EVENT_TYPES), z.literal("*")])).min(1, "choose at least one event type");

export const CreateWebhookEndpointInput = z
  .object({
    url: z.string().trim().min(1, "required").max(2000, "at most 2000 characters"),
    eventTypes: EventTypeList,
    secret: z.string().min(16, "at least 16 characters").max(200).optional(),
  })
  .strict();
export type CreateWebhookEndpointInput = z.infer<typeof CreateWebhookEndpointInput>;

/** The console's form: an empty secret means "generate one". */
export const WebhookFormInput = z
  .object({
    url: z.string().trim().min(1, "required").max(2000, "at most 2000 characters"),
    eventTypes: EventTypeList,
    secret: z.string().max(200).optional(),
  })
  .strict();
export const WebhookEndpointIdInput = z
  .object({ endpointId: z.string().regex(/^whk_[A-Za-z0-9_-]{1,64}$/, "not an endpoint id") })
  .strict();
export const WebhookDeliveryIdInput = z.object({ deliveryId: z.string().regex(/^\d{1,18}$/, "not a delivery id") }).strict();
