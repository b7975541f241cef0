// Optional single sign-on: one OpenID Connect provider configured from the environment.
// Set QUIESCE_OIDC_ISSUER, QUIESCE_OIDC_CLIENT_ID and QUIESCE_OIDC_CLIENT_SECRET (and optionally
// QUIESCE_OIDC_NAME for the button label). Sign-in is accepted only for an email that already belongs
// to a Quiesce user (see lib/modules/sessions/auth-options.ts): the identity provider proves who someone is, the
// Quiesce database decides which team and role they have.
import type { OAuthConfig } from "next-auth/providers/oauth";
import { setting } from "../config";

interface OidcProfile {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

export function oidcConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(
    setting("QUIESCE_OIDC_ISSUER", env) && setting("QUIESCE_OIDC_CLIENT_ID", env) && setting("QUIESCE_OIDC_CLIENT_SECRET", env),
  );
}

export function oidcProvider(env: NodeJS.ProcessEnv = process.env): OAuthConfig<OidcProfile> | null {
  if (!oidcConfigured(env)) return null;
  const issuer = setting("QUIESCE_OIDC_ISSUER", env)!.replace(/\/+$/, "");
  return {
    id: "oidc",
    name: setting("QUIESCE_OIDC_NAME", env),
    type: "oauth",
    wellKnown: `${issuer}/.well-known/openid-configuration`,
    issuer,
    clientId: setting("QUIESCE_OIDC_CLIENT_ID", env)!,
    clientSecret: setting("QUIESCE_OIDC_CLIENT_SECRET", env)!,
    authorization: { params: { scope: "openid email profile" } },
    idToken: true,
    checks: ["pkce", "state"],
    profile(profile) {
      return {
        id: profile.sub,
        email: profile.email ?? null,
        name: profile.name ?? profile.preferred_username ?? profile.email ?? profile.sub,
      };
    },
  };
}
