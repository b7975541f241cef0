// GET /api/v1/providers — the team's providers; POST — an admin registers one (docs/adapters/mcp-gateway.md#registering-a-provider).
import { apiRoute } from "@/lib/api/route";
import { createProvider, listProviders } from "@/lib/modules/stop";
import { CreateProviderBody } from "@/lib/schemas/providers";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal }) => ({ status: 200, json: { providers: await listProviders(principal) } }));

export const POST = apiRoute({ body: CreateProviderBody }, async ({ principal, body }) => ({
  status: 201,
  json: await createProvider(principal, body),
}));
