// GET /api/v1/openapi.json — generated from the same zod schemas the handlers parse with.
import { apiRoute } from "@/lib/api/route";
import { buildOpenApiDocument } from "@/lib/schemas/openapi";

export const GET = apiRoute({ auth: "none" }, async () => ({ json: buildOpenApiDocument() }));
