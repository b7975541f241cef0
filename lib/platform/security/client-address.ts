// The address a request came from, for throttling and the audit trail (docs/security/identity.md#the-source-address).
// Pure: both servers hand it what they know. The API process (lib/api/node-server.ts) passes the
// socket's peer and the headers; the web app's front (lib/start/web-front.ts) does the same before Next
// sees the request, and overwrites X-Forwarded-For with the answer, which Next's route handlers and
// server actions then read (`frontAddress`). A forwarding header is believed only from a peer in
// QUIESCE_TRUSTED_PROXIES, hop by hop from the right, so nobody can pick their own address by sending one.
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { timingSafeEqual } from "node:crypto";

export type ForwardedHeader = "x-forwarded-for" | "forwarded";

export interface TrustedProxies {
  /** Whether a normalized address is one of the trusted proxies. */
  has(address: string): boolean;
  readonly size: number;
}

/** Hops read from a forwarding header at most: a longer chain is cut on the left (the client's end). */
const MAX_HOPS = 32;

/**
 * The canonical text of an IP address (IPv6 compressed and lower-case, IPv4-mapped IPv6 as plain IPv4),
 * accepting a port (`1.2.3.4:80`, `[::1]:80`) and a zone id; null when it is not an IP address.
 */
export function normalizeAddress(raw: string): string | null {
  let s = raw.trim();
  if (s.length === 0 || s.length > 100) return null;
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0 || !/^(:\d{1,5})?$/.test(s.slice(end + 1))) return null;
    s = s.slice(1, end);
  } else if (/^[\d.]+:\d{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (isIPv4(s)) return s;
  if (!isIPv6(s)) return null;
  // The WHATWG URL parser is the canonical IPv6 serializer (RFC 5952), and it is pure.
  const canonical = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

/**
 * Parses QUIESCE_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges, IPv4 or IPv6 (an
 * IPv4-mapped range such as `::ffff:10.0.0.0/104` is the IPv4 range it maps). Throws an Error naming
 * the first entry that is neither.
 */
export function parseTrustedProxies(text: string): TrustedProxies {
  const list = new BlockList();
  let size = 0;
  for (const entry of text.split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    const m = /^([^/]+?)(?:\/(\d{1,3}))?$/.exec(entry);
    // A bare address only: no port, no brackets, no zone.
    const written = m?.[1]?.trim() ?? "";
    const network = isIPv4(written) || (isIPv6(written) && !written.includes("%")) ? normalizeAddress(written) : null;
    if (!m || !network) throw new Error(`not an IP address or CIDR range: "${entry}"`);
    const v4 = isIPv4(network);
    let prefix = m[2] === undefined ? (v4 ? 32 : 128) : Number(m[2]);
    // An IPv4-mapped IPv6 range was written in IPv6 terms: its IPv4 part starts 96 bits in.
    if (v4 && !isIPv4(written) && m[2] !== undefined) {
      if (prefix < 96) throw new Error(`not an IP address or CIDR range: "${entry}" (an IPv4-mapped range needs a prefix of at least 96)`);
      prefix -= 96;
    }
    if (prefix > (v4 ? 32 : 128)) throw new Error(`not an IP address or CIDR range: "${entry}" (prefix too long)`);
    list.addSubnet(network, prefix, v4 ? "ipv4" : "ipv6");
    size++;
  }
  return { has: (address) => size > 0 && list.check(address, isIPv4(address) ? "ipv4" : "ipv6"), size };
}

/** The hops a forwarding header names, client first; null for a hop that is not an IP address. */
export function forwardedHops(value: string, header: ForwardedHeader): (string | null)[] {
  const elements = value.split(",").slice(-MAX_HOPS);
  if (header === "x-forwarded-for") return elements.map((e) => normalizeAddress(e));
  // RFC 7239: `for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`; "unknown" and obfuscated names are no address.
  return elements.map((element) => {
    for (const pair of element.split(";")) {
      const eq = pair.indexOf("=");
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== "for") continue;
      let v = pair.slice(eq + 1).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      return normalizeAddress(v);
    }
    return null;
  });
}

export interface AddressInput {
  /** The socket's remote address. */
  peer: string | null | undefined;
  /** A request header by lower-case name (several lines joined with ", "). */
  header(name: string): string | null | undefined;
  trusted: TrustedProxies;
  /** Which forwarding header the trusted proxies set (the other one is ignored: a client could send it). */
  use: ForwardedHeader;
}

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy — then the forwarding
 * header is read from the right, each hop added by a trusted proxy, and the first hop that is not a
 * trusted proxy is the client. A hop that is not an address stops the walk at the proxy that sent it.
 * "unknown" only when the peer itself is not known.
 */
export function clientAddress(input: AddressInput): string {
  let address = normalizeAddress(input.peer ?? "");
  if (address === null) return "unknown";
  if (!input.trusted.has(address)) return address;
  const raw = input.header(input.use);
  if (!raw) return address;
  const hops = forwardedHops(raw, input.use);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === null || hop === undefined) return address;
    address = hop;
    if (!input.trusted.has(hop)) return hop;
  }
  return address;
}

/**
 * In the web app (route handlers, server actions, next-auth): the address the front decided and wrote
 * as the only X-Forwarded-For entry (lib/start/web-front.ts). "unknown" when there is none.
 */
export function frontAddress(headers: { get(name: string): string | null }): string {
  const value = headers.get("x-forwarded-for");
  return (value === null ? null : normalizeAddress(value.split(",")[0] ?? "")) ?? "unknown";
}

/**
 * The header the console's front adds when it forwards /api/v1 to the API process
 * (lib/start/api-forward.ts): the per-start secret, so that only the front's own X-Forwarded-For is
 * believed there, not one a client sent to the API port.
 */
export const FRONT_HEADER = "x-quiesce-front";

/** Whether a request came through the front: its FRONT_HEADER equals the configured secret. */
export function cameThroughFront(sent: string | null, secret: string | undefined): boolean {
  if (!secret || sent === null) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

let memo: { text: string; trusted: TrustedProxies } | undefined;
/** parseTrustedProxies, remembered for the last text (the setting is read on every request). */
export function trustedProxies(text: string): TrustedProxies {
  if (memo?.text !== text) memo = { text, trusted: parseTrustedProxies(text) };
  return memo.trusted;
}
