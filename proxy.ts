// Next.js proxy (formerly middleware). Its jobs:
//  1. Security headers on every response (lib/platform/security/headers.ts): a fresh CSP nonce per page
//     request — passed to Next on the request's Content-Security-Policy header so its own scripts carry
//     it — frame-ancestors 'none', nosniff, Referrer-Policy, Permissions-Policy, HSTS over https.
//  2. The session cookie's idle timeout slides: a page request re-issues a cookie older than a minute.
//  3. A page address that does not decode (`/runs/%E0%A4%A`) is a 400 with a readable page
//     (lib/platform/security/malformed-url.ts), not Next.js's bare 500; a machine API path, a JSON 400.
//  4. A server action whose declared body is past the limit is a 413 with a readable message
//     (lib/platform/security/action-body.ts), before Next reads it and answers 500.
//  5. A console URL opened without a session cookie — typically a receipt link from a review packet —
//     goes to sign-in and comes back to the same URL afterwards. This only looks for the cookie; whether
//     the session is valid, and what its member may see, is decided by every page, action and route
//     from the database (lib/modules/sessions/session.ts).
import { NextResponse, type NextRequest } from "next/server";
import { newNonce, securityHeaders } from "./lib/platform/security/headers";
import { refreshedSessionToken } from "./lib/platform/auth/session-refresh";
import { authSecret } from "./lib/platform/auth/secret";
import { setting } from "./lib/platform/config";
import { isMalformedPath, malformedUrlPage } from "./lib/platform/security/malformed-url";
import { badRequest } from "./lib/platform/errors";
import { actionBodyRefusal } from "./lib/platform/security/action-body";

const SESSION_COOKIE = /^(__Secure-)?next-auth\.session-token(\.\d+)?$/;
const CONSOLE = /^\/(runs|barriers|receipts|reconciliations|audit|keys|webhooks|people|account)(\/|$)/;

function isHttps(req: NextRequest): boolean {
  return req.nextUrl.protocol === "https:" || req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}

export async function proxy(req: NextRequest) {
  const path = req.nextUrl.pathname;
  // The machine API only reaches the proxy when its path carries a percent sign (see `config`): a
  // malformed one is a 400 in the API's error shape, anything else passes untouched.
  if (path.startsWith("/api/")) {
    if (!isMalformedPath(path)) return NextResponse.next();
    return NextResponse.json(badRequest("malformed URL path: a percent-encoding does not decode").toBody(), { status: 400 });
  }
  const https = isHttps(req);
  const nonce = newNonce();
  const headers = securityHeaders({ nonce, https, dev: process.env.NODE_ENV === "development" });
  let res: NextResponse;
  const tooBig = actionBodyRefusal(req.method, req.headers);
  if (tooBig) {
    res = new NextResponse(tooBig.message, { status: tooBig.status, headers: { "content-type": "text/plain" } });
  } else if (isMalformedPath(path)) {
    // Nothing can be found at an address that does not decode: 400 and the console's error page, not
    // the bare 500 Next.js answers when it fails to decode the route parameters.
    res = new NextResponse(malformedUrlPage(), { status: 400, headers: { "content-type": "text/html; charset=utf-8" } });
  } else if (CONSOLE.test(path) && !req.cookies.getAll().some((c) => SESSION_COOKIE.test(c.name))) {
    const url = req.nextUrl.clone();
    url.pathname = "/signin";
    url.search = `?callbackUrl=${encodeURIComponent(path + req.nextUrl.search)}`;
    res = NextResponse.redirect(url);
  } else {
    const requestHeaders = new Headers(req.headers);
    requestHeaders.set("x-nonce", nonce);
    // For the 403 and 404 boundaries (app/(console)/forbidden.tsx, a receipt's not-found.tsx), which get
    // no props: which page, and which query, was refused or missing.
    requestHeaders.set("x-quiesce-path", path);
    requestHeaders.set("x-quiesce-search", req.nextUrl.search);
    requestHeaders.set("content-security-policy", headers["content-security-policy"]!);
    res = NextResponse.next({ request: { headers: requestHeaders } });
  }
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  // The idle timeout slides while pages are used (lib/platform/auth/session-refresh.ts).
  const session = req.cookies.getAll().find((c) => /^(__Secure-)?next-auth\.session-token$/.test(c.name));
  if (session) {
    const idle = setting("QUIESCE_SESSION_IDLE_SECONDS");
    const fresh = await refreshedSessionToken(session.value, authSecret(), idle).catch(() => null);
    if (fresh) {
      res.cookies.set(session.name, fresh, {
        httpOnly: true,
        sameSite: "lax",
        path: "/",
        secure: session.name.startsWith("__Secure-"),
        maxAge: idle,
      });
    }
  }
  return res;
}

export const config = {
  // Every page. Not /api/*: Next buffers the whole request body for a proxy, and the machine API's hot
  // routes must refuse a bad key or an oversized body before reading it; API responses and static
  // assets get their fixed headers from next.config.mjs instead.
  // Every page; and API paths with a percent sign in them, only to answer a malformed one with a 400
  // (Next.js answers a bare 500 when it cannot decode the route parameters).
  matcher: ["/((?!api/|_next/static|_next/image|favicon.ico|icon.svg).*)", "/api/:path(.*%.*)"],
};
