// Where the browser may go after sign-in: only a path on this site, decided AFTER the URL is
// normalised the way a browser will read it (tabs and newlines dropped, backslashes as slashes,
// dot segments resolved). "/\t/evil.example" is "//evil.example" to a browser, so it must be judged as
// that; anything that is not same-origin, or carries control characters, goes to the default.

export const DEFAULT_AFTER_SIGN_IN = "/runs";

const BASE = "http://quiesce.invalid";

/** A same-origin path (with query and fragment) to follow after sign-in, else `fallback`. */
export function safeCallbackUrl(raw: unknown, fallback: string = DEFAULT_AFTER_SIGN_IN): string {
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (typeof v !== "string" || v.length === 0 || v.length > 2000) return fallback;
  // Control characters (CR, LF, tab, NUL …) never belong in a path we redirect to.

  if (/[\u0000-\u001f\u007f]/.test(v)) return fallback;
  if (!v.startsWith("/")) return fallback;
  let url: URL;
  try {
    url = new URL(v, BASE);
  } catch {
    return fallback;
  }
  if (url.origin !== BASE) return fallback;
  const path = url.pathname + url.search + url.hash;
  // The normalised result must itself read as a path, never as a scheme-relative URL.
  if (!path.startsWith("/") || path.startsWith("//") || path.includes("\\")) return fallback;
  if (url.pathname === "/signin" || url.pathname.startsWith("/signin/") || url.pathname.startsWith("/api/")) return fallback;
  return path;
}

/** For next-auth's redirect callback: a full URL on `baseUrl`'s origin, else `baseUrl` + the default. */
export function safeRedirect(url: string, baseUrl: string): string {
  let target: URL;
  try {
    target = new URL(url, baseUrl);
  } catch {
    return baseUrl + DEFAULT_AFTER_SIGN_IN;
  }
  const base = new URL(baseUrl);
  if (target.origin !== base.origin) return baseUrl + DEFAULT_AFTER_SIGN_IN;
  return base.origin + safeCallbackUrl(target.pathname + target.search + target.hash);
}
