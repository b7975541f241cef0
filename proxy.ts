// Next.js proxy (formerly middleware): a console URL opened without a session cookie — typically a
// receipt link from a review packet — goes to sign-in and comes back to the same URL afterwards.
// This only looks for the cookie; whether the session is valid, and what its member may see, is
// decided by every page, action and route from the database (lib/dal/session.ts).
import { NextResponse, type NextRequest } from "next/server";

const SESSION_COOKIE = /^(__Secure-)?next-auth\.session-token(\.\d+)?$/;

export function proxy(req: NextRequest) {
  if (req.cookies.getAll().some((c) => SESSION_COOKIE.test(c.name))) return NextResponse.next();
  const url = req.nextUrl.clone();
  url.pathname = "/signin";
  url.search = `?callbackUrl=${encodeURIComponent(req.nextUrl.pathname + req.nextUrl.search)}`;
  return NextResponse.redirect(url);
}

export const config = {
  matcher: ["/runs", "/runs/:path*", "/barriers/:path*", "/receipts/:path*", "/reconciliations", "/audit", "/keys"],
};
