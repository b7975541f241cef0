"use server";
// API keys: admins create (the secret is returned once, to this response only) and revoke.
import { serverAction } from "@/lib/actions/run-action";
import { CreateKeyInput, RevokeKeyInput } from "@/lib/schemas/console";
import { createApiKey, revokeApiKey } from "@/lib/modules/keys";

export const createKeyAction = serverAction(
  { name: "createKey", input: CreateKeyInput, action: "key.manage", revalidate: ["/keys"] },
  async ({ session, input }) => {
    const expiresAt = input.expiresInDays ? new Date(Date.now() + input.expiresInDays * 86_400_000) : null;
    const k = await createApiKey(session.principal, {
      teamId: session.principal.teamId,
      kind: input.kind,
      name: input.name,
      userId: input.kind === "operator" ? (input.userId ?? session.user.id) : null,
      expiresAt,
    });
    return { id: k.id, name: k.name, kind: k.kind, secret: k.secret };
  },
);

export const revokeKeyAction = serverAction(
  { name: "revokeKey", input: RevokeKeyInput, action: "key.manage", revalidate: ["/keys"] },
  async ({ session, input }) => {
    const k = await revokeApiKey(session.principal, input.keyId);
    return { id: k.id, revokedAt: k.revokedAt };
  },
);
