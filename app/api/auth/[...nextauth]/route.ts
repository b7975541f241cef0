// Auth.js endpoints: /api/auth/signin, /callback/<provider>, /session, /csrf, /signout.
// A password sign-in (POST /api/auth/callback/credentials) is throttled before the password is looked
// at (lib/modules/members/sign-in.ts): a blocked account × address pair or address gets 429 with the wait, an account
// failing from many addresses a bounded delay; every attempt is audited. The address is the one the web
// front decided from the socket (lib/start/web-front.ts), never a header the client chose.
import NextAuth from "next-auth";
import { authOptions } from "@/lib/modules/sessions";
import { passwordGate, recordSignIn } from "@/lib/modules/members";
import { frontAddress } from "@/lib/platform/security/client-address";
import { sleep } from "@/lib/platform/wait";

const handler = NextAuth(authOptions());

const SESSION_COOKIE = /(^|,\s*)(__Secure-)?next-auth\.session-token(\.\d+)?=[^;]+/;

async function POST(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }): Promise<Response> {
  const { nextauth } = await ctx.params;
  if (nextauth.join("/") !== "callback/credentials") return handler(req, ctx);
  const form = new URLSearchParams(await req.clone().text());
  const email = (form.get("email") ?? "").trim().toLowerCase().slice(0, 320);
  const address = frontAddress(req.headers);
  const { blockedSeconds: wait, delayMs } = await passwordGate(email, address);
  if (wait > 0) {
    const url = new URL(`/signin?error=Throttled&retryAfter=${wait}`, req.url).toString();
    return Response.json(
      { url, error: { code: "rate_limited", message: `too many failed sign-ins: try again in ${wait} s` } },
      { status: 429, headers: { "retry-after": String(wait), "cache-control": "no-store" } },
    );
  }
  if (delayMs > 0) await sleep(delayMs);
  const res: Response = await handler(req, ctx);
  const cookies = res.headers.getSetCookie?.() ?? [];
  const ok = cookies.some((c) => SESSION_COOKIE.test(c));
  const session = ok ? /^[^=]+=([^;]+)/.exec(cookies.find((c) => SESSION_COOKIE.test(c))!)?.[1] : undefined;
  let userId: string | null = null;
  if (session) {
    const { decode } = await import("next-auth/jwt");
    const token = await decode({ token: session, secret: authOptions().secret! }).catch(() => null);
    userId = token?.sub ?? null;
  }
  const after = await recordSignIn({ email, address, ok, userId, provider: "credentials" });
  if (!ok && after > 0) res.headers.set("retry-after", String(after));
  return res;
}

export { handler as GET, POST };
