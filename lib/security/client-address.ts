// The source address a request came from, for throttling. Route handlers do not see the socket; Next
// fills `x-forwarded-for` with the peer address when the request carries none. Behind a reverse proxy
// that proxy must overwrite (not append to) the header, or a client could pick its own address; the
// per-account sign-in throttle does not depend on this at all.
export function clientAddress(headers: Headers | Record<string, string | string[] | undefined>): string {
  const get = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const xff = get("x-forwarded-for") ?? get("x-real-ip") ?? "";
  const first = xff.split(",")[0]?.trim() ?? "";
  return first.length > 0 && first.length <= 100 ? first.toLowerCase() : "unknown";
}
