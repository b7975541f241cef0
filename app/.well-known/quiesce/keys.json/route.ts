// GET /.well-known/quiesce/keys.json — this deployment's receipt-signing public keys (current and
// rotated-out), public by design: anyone holding a signed receipt verifies it with them, offline.
import { keysDocument } from "@/lib/platform/signing/keys-document";

export const dynamic = "force-dynamic";

export function GET(): Response {
  try {
    return Response.json(keysDocument(), { headers: { "cache-control": "public, max-age=300" } });
  } catch (err) {
    console.error("[keys.json]", err);
    return Response.json({ error: { code: "unavailable", message: "the signing keys cannot be read" } }, { status: 503 });
  }
}
