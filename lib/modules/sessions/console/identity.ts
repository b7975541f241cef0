// Who is signing in. Used only by the next-auth callbacks (lib/modules/sessions/auth-options.ts): it answers "which
// Quiesce user is this", never "what may they do" — roles are read per request in lib/modules/sessions/session.ts.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { verifyPassword } from "../../../platform/auth/password";

export interface SignInUser {
  id: string;
  email: string;
  name: string;
  sessionVersion: number;
}

// A fixed bcrypt hash (of a random string) compared against when the email is unknown, so a wrong
// email costs the same time as a wrong password and sign-in timing does not reveal who has an account.
const DUMMY_HASH = "$2b$10$CwTycUXWue0Thq9StjUM0uJ8.6E0xYqg4bqiR8C4ZbP9E1mD6O4bW";

export async function verifyCredentials(email: string, password: string): Promise<SignInUser | null> {
  const user = await prisma().user.findUnique({ where: { email: email.trim().toLowerCase() } });
  if (!user || !user.passwordHash) {
    await verifyPassword(password, DUMMY_HASH);
    return null;
  }
  if (!(await verifyPassword(password, user.passwordHash))) return null;
  // A disabled user cannot sign in, even with the right password.
  if (user.disabledAt) return null;
  return { id: user.id, email: user.email, name: user.name, sessionVersion: user.sessionVersion };
}

/** For single sign-on: the identity provider vouches for the email; it must name an existing user. */
export async function userForEmail(email: string): Promise<SignInUser | null> {
  const user = await prisma().user.findUnique({ where: { email: email.trim().toLowerCase() } });
  return user && !user.disabledAt ? { id: user.id, email: user.email, name: user.name, sessionVersion: user.sessionVersion } : null;
}
