// The security headers every response carries (pure: the proxy passes the nonce and the scheme).
// Scripts run only with this request's nonce ('strict-dynamic' lets Next's own chunk loader add the
// scripts it needs); nothing may frame the console; MIME types are not sniffed; referrers stay on the
// site; powerful browser features are off; HSTS only when served over https.

export interface HeaderContext {
  /** Per-request nonce (base64); omitted for API responses, which never render HTML. */
  nonce?: string;
  https: boolean;
  /** `next dev` needs eval for fast refresh. */
  dev?: boolean;
}

export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // React renders a few style attributes; inline styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function securityHeaders(ctx: HeaderContext): Record<string, string> {
  const h: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
  };
  h["content-security-policy"] = ctx.nonce ? contentSecurityPolicy(ctx.nonce, ctx.dev) : "default-src 'none'; frame-ancestors 'none'";
  if (ctx.https) h["strict-transport-security"] = "max-age=31536000; includeSubDomains";
  return h;
}

/** A fresh nonce: 16 random bytes, base64. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64");
}
