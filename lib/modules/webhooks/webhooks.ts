// Webhook endpoints (admins: the same permission as API keys, since both hand out secrets) and the
// outbox's dead letters. Events are written by lib/modules/internal/events inside each control write;
// lib/integrations/webhook-worker delivers them.
import "server-only";
import { randomBytes } from "node:crypto";
import { prisma } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { badRequest, notFound } from "../../platform/errors";
import { CreateWebhookEndpointInput } from "../../schemas/webhooks";
import { refuseEndpointUrl } from "./events";
import { integrationsConfig } from "../../platform/config/integrations";
import { checkWebhookTarget, SAVE_LOOKUP_MS } from "./target";
import { appendAudit } from "../audit/audit";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { assertTeam, authorize, teamOf } from "../../platform/auth/authorize";

export interface WebhookEndpointView {
  id: string;
  teamId: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  createdBy: string;
  createdAt: string;
}
export interface WebhookDeliveryView {
  id: string;
  eventId: string;
  endpointId: string;
  url: string;
  type: string;
  runId: string;
  status: string;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

const view = (e: Omit<WebhookEndpointView, "createdAt"> & { createdAt: Date }): WebhookEndpointView => ({
  id: e.id,
  teamId: e.teamId,
  url: e.url,
  eventTypes: e.eventTypes,
  enabled: e.enabled,
  createdBy: e.createdBy,
  createdAt: e.createdAt.toISOString(),
});

function teamFor(p: Principal, teamId?: string): string {
  const t = teamOf(p, teamId);
  if (!t) throw badRequest("team: required");
  if (teamId) assertTeam(p, teamId, "team");
  return t;
}

/** Adds an endpoint; the secret is returned once (generated unless given). Bad input writes nothing. */
export async function createWebhookEndpoint(
  p: Principal,
  input: unknown,
  teamId?: string,
): Promise<WebhookEndpointView & { secret: string }> {
  authorize(p, "key.manage");
  const parsed = CreateWebhookEndpointInput.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw badRequest(`${i.path.join(".") || "input"}: ${i.message}`);
  }
  const refused = refuseEndpointUrl(parsed.data.url, integrationsConfig().selfOrigins);
  if (refused) throw badRequest(`url: ${refused}`);
  // Early word for the admin; every delivery judges the addresses again right before it connects. A name
  // that does not resolve yet has nothing to judge and is taken: it cannot be reached until it does.
  const target = await checkWebhookTarget(new URL(parsed.data.url), { signal: AbortSignal.timeout(SAVE_LOOKUP_MS) });
  if (!target.ok && !target.unresolved) throw badRequest(`url: ${target.reason}`);
  const team = teamFor(p, teamId);
  const secret = parsed.data.secret ?? `whsec_${randomBytes(24).toString("base64url")}`;
  const actor = actorOf(p);
  const row = await prisma().$transaction(async (tx) => {
    const t = await tx.team.findUnique({ where: { id: team }, select: { id: true } });
    if (!t) throw notFound("team");
    const e = await tx.webhookEndpoint.create({
      data: {
        id: newId("whk"),
        teamId: team,
        url: new URL(parsed.data.url).toString(),
        secret,
        eventTypes: [...new Set(parsed.data.eventTypes)],
        createdBy: actor,
      },
    });
    await appendAudit(tx, { teamId: team, actor, action: "webhook.create", target: e.id, after: { url: e.url, eventTypes: e.eventTypes } });
    return e;
  });
  return { ...view(row), secret };
}

export async function listWebhookEndpoints(p: Principal, teamId?: string): Promise<WebhookEndpointView[]> {
  authorize(p, "key.manage");
  const team = teamFor(p, teamId);
  const rows = await prisma().webhookEndpoint.findMany({ where: { teamId: team }, orderBy: { createdAt: "asc" } });
  return rows.map(view);
}

export async function deleteWebhookEndpoint(p: Principal, id: string): Promise<void> {
  authorize(p, "key.manage");
  const e = await prisma().webhookEndpoint.findUnique({ where: { id } });
  if (!e) throw notFound("webhook endpoint");
  assertTeam(p, e.teamId, "webhook endpoint");
  await prisma().$transaction(async (tx) => {
    await tx.webhookEndpoint.delete({ where: { id } });
    await appendAudit(tx, {
      teamId: e.teamId,
      actor: actorOf(p),
      action: "webhook.delete",
      target: id,
      before: { url: e.url, eventTypes: e.eventTypes },
    });
  });
}

/** A new signing secret for an endpoint, returned once; deliveries from now on are signed with it. */
export async function rotateWebhookSecret(p: Principal, id: string, secret?: string): Promise<{ id: string; secret: string }> {
  authorize(p, "key.manage");
  if (secret !== undefined && (secret.length < 16 || secret.length > 200)) throw badRequest("secret: 16 to 200 characters");
  const e = await prisma().webhookEndpoint.findUnique({ where: { id } });
  if (!e) throw notFound("webhook endpoint");
  assertTeam(p, e.teamId, "webhook endpoint");
  const next = secret ?? `whsec_${randomBytes(24).toString("base64url")}`;
  await prisma().$transaction(async (tx) => {
    await tx.webhookEndpoint.update({ where: { id }, data: { secret: next } });
    await appendAudit(tx, { teamId: e.teamId, actor: actorOf(p), action: "webhook.rotate_secret", target: id });
  });
  return { id, secret: next };
}

/** Deliveries of the team's endpoints by status (dead letters: `dead`), newest first. */
export async function listWebhookDeliveries(
  p: Principal,
  status: "pending" | "delivered" | "dead",
  teamId?: string,
  limit = 100,
): Promise<WebhookDeliveryView[]> {
  authorize(p, "key.manage");
  const team = teamFor(p, teamId);
  const rows = await prisma().webhookDelivery.findMany({
    where: { teamId: team, status },
    orderBy: { id: "desc" },
    take: Math.min(Math.max(limit, 1), 500),
    include: { endpoint: { select: { url: true } } },
  });
  return rows.map((d) => ({
    id: d.id.toString(),
    eventId: d.eventId,
    endpointId: d.endpointId,
    url: d.endpoint.url,
    type: d.type,
    runId: d.orderingKey,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt.toISOString(),
    lastError: d.lastError,
    createdAt: d.createdAt.toISOString(),
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
  }));
}

/** Puts a dead letter back in the queue (attempts from zero, due now). The event id stays the same. */
export async function retryWebhookDelivery(p: Principal, deliveryId: string): Promise<void> {
  authorize(p, "key.manage");
  if (!/^\d{1,18}$/.test(deliveryId)) throw badRequest("deliveryId: not a delivery id");
  const d = await prisma().webhookDelivery.findUnique({ where: { id: BigInt(deliveryId) } });
  if (!d) throw notFound("webhook delivery");
  assertTeam(p, d.teamId, "webhook delivery");
  if (d.status !== "dead") throw badRequest("deliveryId: only a dead letter can be retried");
  await prisma().$transaction(async (tx) => {
    await tx.webhookDelivery.update({
      where: { id: d.id },
      data: { status: "pending", attempts: 0, nextAttemptAt: new Date(), lastError: null },
    });
    await appendAudit(tx, {
      teamId: d.teamId,
      actor: actorOf(p),
      action: "webhook.retry",
      target: deliveryId,
      after: { eventId: d.eventId },
    });
  });
}
