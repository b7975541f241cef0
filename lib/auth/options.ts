// next-auth (Auth.js v4) configuration for the console (docs/architecture.md#security).
// The session is a signed JWT cookie that names the user and nothing else that matters: team and role
// are read from the database on every request (lib/dal/session.ts), so removing a member or changing a
// role takes effect on the next click, not when the token expires.
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { authSecret } from "./secret";
import { oidcProvider } from "./oidc";
import { userForEmail, verifyCredentials } from "../dal/console/identity";
import { setting } from "../config";

/** Session lifetime; the cookie is re-issued while in use (updateAge), so only idle sessions expire. */
export const SESSION_MAX_AGE_SECONDS = setting("QUIESCE_SESSION_MAX_AGE");

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

export const authOptions: NextAuthOptions = {
  secret: authSecret(),
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS, updateAge: 15 * 60 },
  jwt: { maxAge: SESSION_MAX_AGE_SECONDS },
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
      }
      return token;
    },
    async session({ session, token }) {
      // Only identity goes to the browser; authorization never trusts this object.
      if (session.user) {
        (session.user as { id?: string }).id = token.sub;
      }
      return session;
    },
  },
};
