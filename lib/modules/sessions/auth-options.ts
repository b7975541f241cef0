// next-auth (Auth.js v4) configuration for the console (docs/architecture.md#security).
// The session is a signed JWT cookie that names the user and nothing else that matters: team and role
// are read from the database on every request (lib/modules/sessions/session.ts), so removing a member or changing a
// role takes effect on the next click, not when the token expires.
import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { authSecret } from "../../platform/auth/secret";
import { oidcProvider } from "../../platform/auth/oidc";
import { userForEmail, verifyCredentials } from "./console/identity";
import { signOutUser } from "../members/sign-in";
import { setting } from "../../platform/config";
import { safeRedirect } from "../../platform/security/callback-url";

/**
 * Two limits: the cookie itself lives for the idle timeout and is re-issued while the console is in use;
 * the absolute lifetime from sign-in (QUIESCE_SESSION_MAX_AGE, default 12 h) is checked on every
 * request against the sign-in time in the token, together with the user's session version.
 */
export const SESSION_IDLE_SECONDS = setting("QUIESCE_SESSION_IDLE_SECONDS");

const credentialsInput = z.object({ email: z.string().trim().email().max(320), password: z.string().min(1).max(200) });

// Behind `next start -p N` without NEXTAUTH_URL, next-auth would assume localhost:3000 for its own
// redirects; the console's sign-in and sign-out use redirect:false, but keep the default sane anyway.
process.env.NEXTAUTH_URL ??= `http://localhost:${setting("PORT")}`;

function providers(): NextAuthOptions["providers"] {
  const list: NextAuthOptions["providers"] = [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(raw) {
        const parsed = credentialsInput.safeParse(raw ?? {});
        if (!parsed.success) return null;
        return verifyCredentials(parsed.data.email, parsed.data.password);
      },
    }),
  ];
  const oidc = oidcProvider();
  if (oidc) list.push(oidc);
  return list;
}

// Built on first use, not at import: nothing that merely imports the module constructs the sign-in
// providers or reads the auth secret.
let built: NextAuthOptions | null = null;
export function authOptions(): NextAuthOptions {
  built ??= buildAuthOptions();
  return built;
}

const buildAuthOptions = (): NextAuthOptions => ({
  secret: authSecret(),
  session: { strategy: "jwt", maxAge: SESSION_IDLE_SECONDS, updateAge: 0 },
  jwt: { maxAge: SESSION_IDLE_SECONDS },
  pages: { signIn: "/signin", error: "/signin" },
  providers: providers(),
  callbacks: {
    async signIn({ user, account }) {
      if (account?.provider === "credentials") return true;
      // Single sign-on: the email must already belong to a Quiesce user (no self-provisioning).
      if (!user.email) return false;
      return (await userForEmail(user.email)) !== null;
    },
    async jwt({ token, user, account }) {
      if (user && account) {
        const known = account.provider === "credentials" ? user : await userForEmail(user.email ?? "");
        if (!known) throw new Error("unknown user");
        token.sub = known.id;
        token.email = known.email;
        token.name = known.name;
        // The session version and sign-in time: lib/modules/sessions/session.ts ends the session when the user's
        // version moved on (sign-out, password change, disabled, removed) or the absolute lifetime passed.
        token.sv = (known as { sessionVersion?: number }).sessionVersion;
        token.authAt = Math.floor(Date.now() / 1000);
      }
      return token;
    },
    async session({ session, token }) {
      // Only identity goes to the browser; authorization never trusts this object.
      if (session.user) {
        (session.user as { id?: string }).id = token.sub;
      }
      (session as { quiesce?: unknown }).quiesce = { sub: token.sub, sv: token.sv, authAt: token.authAt };
      return session;
    },
    // Only this site: next-auth would otherwise follow any same-origin-looking callbackUrl as given.
    async redirect({ url, baseUrl }) {
      return safeRedirect(url, baseUrl);
    },
  },
  events: {
    async signOut({ token }) {
      if (token?.sub) await signOutUser(token.sub);
    },
  },
});
