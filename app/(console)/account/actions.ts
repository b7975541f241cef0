"use server";
// The member's own account. Like every action, through runAction (lib/actions/run-action.ts).
import { cookies, headers } from "next/headers";
import { serverAction } from "@/lib/actions/run-action";
import { ChangePasswordInput } from "@/lib/schemas/console";
import { changeOwnPassword } from "@/lib/modules/members";
import { frontAddress } from "@/lib/platform/security/client-address";
import { reissuedSessionToken } from "@/lib/platform/auth/session-refresh";
import { authSecret } from "@/lib/platform/auth/secret";
import { SESSION_IDLE_SECONDS } from "@/lib/modules/sessions";

const SESSION_COOKIE = /^(__Secure-)?next-auth\.session-token$/;

/**
 * Changes the caller's password. Every session of the user ends (the session version moves on), and
 * this one is re-issued at the new version, so the browser that changed it stays signed in.
 */
export const changePasswordAction = serverAction(
  { name: "changePassword", input: ChangePasswordInput, action: "run.read" },
  async ({ session, input }) => {
    const { sessionVersion } = await changeOwnPassword(session.principal, { ...input, address: frontAddress(await headers()) });
    const jar = await cookies();
    const current = jar.getAll().find((c) => SESSION_COOKIE.test(c.name));
    const fresh = current ? await reissuedSessionToken(current.value, authSecret(), SESSION_IDLE_SECONDS, sessionVersion) : null;
    if (current && fresh) {
      jar.set(current.name, fresh, {
        httpOnly: true,
        sameSite: "lax",
        path: "/",
        secure: current.name.startsWith("__Secure-"),
        maxAge: SESSION_IDLE_SECONDS,
      });
    }
    return { changed: true, stillSignedIn: Boolean(fresh) };
  },
);
