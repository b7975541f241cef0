// GET /api/v1/openapi.json — generated from the same zod schemas the handlers parse with; built once per
// process and served from memory.
import { apiRoute } from "@/lib/api/route";
import { servedOpenApiJson } from "@/lib/schemas/openapi";

export const GET = apiRoute(
  { auth: "none" },
  async () =>
    new Response(servedOpenApiJson(), {
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    }),
);
