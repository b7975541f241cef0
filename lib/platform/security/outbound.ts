// Which addresses an outbound request (a webhook delivery) may reach. Pure: the caller resolves the
// name and hands the addresses in, both when an endpoint is saved and again right before the connection,
// which then goes to exactly the addresses judged here (docs/security/hardening.md#outbound-requests).
//
// Everything is decided on addresses, never on the spelling of the URL: WHATWG URL already turns
// `0x7f.1`, `2130706433` and `127.1` into `127.0.0.1`, and `net.BlockList` matches an IPv4-mapped IPv6
// address (`::ffff:127.0.0.1`) against the IPv4 rules, so every way of writing an address meets one rule.
import { BlockList, isIP } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Ranges no webhook may reach unless QUIESCE_WEBHOOK_ALLOW_PRIVATE lists them; the most specific first, so the reason is exact. */
const DENIED: readonly (readonly [network: string, prefix: number, what: string])[] = [
  ["0.0.0.0", 8, "an unspecified (this-network) address"],
  ["10.0.0.0", 8, "a private address (RFC 1918)"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address (RFC 1918)"],
  ["192.0.0.0", 24, "a reserved address"],
  ["192.0.2.0", 24, "a reserved (documentation) address"],
  ["192.88.99.0", 24, "a reserved address"],
  ["192.168.0.0", 16, "a private address (RFC 1918)"],
  ["198.18.0.0", 15, "a reserved (benchmarking) address"],
  ["198.51.100.0", 24, "a reserved (documentation) address"],
  ["203.0.113.0", 24, "a reserved (documentation) address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved or broadcast address"],
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  // IPv4-compatible and -translated forms, NAT64, Teredo and 6to4 carry an IPv4 address a gateway may
  // forward to: refused whole rather than trusting every gateway on the way.
  ["::", 96, "a reserved address"],
  ["::ffff:0:0:0", 96, "a reserved address"],
  ["64:ff9b::", 96, "a NAT64 address"],
  ["64:ff9b:1::", 48, "a NAT64 address"],
  ["100::", 64, "a reserved (discard) address"],
  ["2001:db8::", 32, "a reserved (documentation) address"],
  ["2001::", 23, "a reserved address"],
  ["2002::", 16, "a 6to4 address"],
  ["3fff::", 20, "a reserved (documentation) address"],
  ["5f00::", 16, "a reserved address"],
  ["fc00::", 7, "a unique local address (ULA)"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a reserved (site-local) address"],
  ["ff00::", 8, "a multicast address"],
];

const DENIED_LISTS = DENIED.map(([network, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 6 ? "ipv6" : "ipv4");
  return { list, what };
});

/** Loopback and unspecified: an address that means "this machine" whatever it is spelt like. */
const THIS_MACHINE = new BlockList();
THIS_MACHINE.addSubnet("127.0.0.0", 8, "ipv4");
THIS_MACHINE.addSubnet("0.0.0.0", 8, "ipv4");
THIS_MACHINE.addAddress("::1", "ipv6");
THIS_MACHINE.addAddress("::", "ipv6");

/** `fe80::1%eth0` → `fe80::1` (a zone only says which interface), and the family of what is left; null when not an address. */
function bare(address: string): ResolvedAddress | null {
  const a = address.replace(/%.*$/, "");
  const family = isIP(a);
  return family === 4 || family === 6 ? { address: a, family } : null;
}

const typeOf = (a: ResolvedAddress) => (a.family === 4 ? "ipv4" : "ipv6");

/** Why `address` is outside the public internet (e.g. "a loopback address"), or null for a public address. */
export function nonPublicRange(address: string): string | null {
  const a = bare(address);
  if (!a) return "not an IP address";
  for (const d of DENIED_LISTS) if (d.list.check(a.address, typeOf(a))) return d.what;
  return null;
}

/** Why a connection to `address` is refused, or null. An address inside `allow` is accepted whatever its range. */
export function refusedAddress(address: string, allow: BlockList): string | null {
  const a = bare(address);
  if (!a) return "not an IP address";
  if (allow.check(a.address, typeOf(a))) return null;
  return nonPublicRange(a.address);
}

/**
 * `a.b.c.d/n`, `x::y/n` or a bare address, comma-separated (QUIESCE_WEBHOOK_ALLOW_PRIVATE). Returns the
 * list, or the first item that is not a CIDR.
 */
export function parseCidrList(text: string): { ok: true; list: BlockList; cidrs: string[] } | { ok: false; bad: string } {
  const list = new BlockList();
  const cidrs: string[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (!item) continue;
    const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(item);
    const a = m ? bare(m[1]!) : null;
    if (!m || !a || m[1]!.includes("%")) return { ok: false, bad: item };
    const max = a.family === 4 ? 32 : 128;
    const prefix = m[2] === undefined ? max : Number(m[2]);
    if (prefix > max) return { ok: false, bad: item };
    list.addSubnet(a.address, prefix, typeOf(a));
    cidrs.push(`${a.address}/${prefix}`);
  }
  return { ok: true, list, cidrs };
}

/** What to connect to: an address literal, or a name to resolve. WHATWG has already normalised the URL. */
export type Host = { kind: "ip"; address: ResolvedAddress } | { kind: "name"; name: string };

export function hostOf(u: URL): Host {
  const h = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  const a = bare(h);
  if (a) return { kind: "ip", address: a };
  // A trailing dot names the same host (`localhost.` is `localhost`).
  return { kind: "name", name: h.toLowerCase().replace(/\.$/, "") };
}

/** `localhost` and every `*.localhost` are this machine (RFC 6761), whatever a resolver would say. */
export function localhostAddresses(name: string): ResolvedAddress[] | null {
  const n = name.toLowerCase().replace(/\.$/, "");
  return n === "localhost" || n.endsWith(".localhost")
    ? [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ]
    : null;
}

export const portOf = (u: URL): number => (u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80);

/** This deployment's own addresses (a webhook pointing at them would loop into our own API). */
export interface SelfTargets {
  /** The deployment's own origins (QUIESCE_PUBLIC_URL, NEXTAUTH_URL, QUIESCE_URL, the ports it listens on). */
  origins: readonly string[];
  /** This machine's interface addresses (besides loopback and unspecified, which always count). */
  localAddresses: readonly string[];
}

/** Whether a connection to `addresses` on `port` for the host of `u` reaches one of the deployment's own origins. */
export function isSelf(u: URL, addresses: readonly ResolvedAddress[], self: SelfTargets): boolean {
  const here = new BlockList();
  for (const a of self.localAddresses) {
    const b = bare(a);
    if (b) here.addAddress(b.address, typeOf(b));
  }
  const onThisMachine = (a: ResolvedAddress) => THIS_MACHINE.check(a.address, typeOf(a)) || here.check(a.address, typeOf(a));
  const host = hostOf(u);
  const port = portOf(u);
  for (const o of self.origins) {
    let s: URL;
    try {
      s = new URL(o);
    } catch {
      continue;
    }
    if (portOf(s) !== port) continue;
    const sh = hostOf(s);
    if (sh.kind === "name" && host.kind === "name" && sh.name === host.name) return true;
    const sAddrs = sh.kind === "ip" ? [sh.address] : (localhostAddresses(sh.name) ?? []);
    for (const sa of sAddrs) {
      const same = new BlockList();
      same.addAddress(sa.address, typeOf(sa));
      for (const a of addresses) if (same.check(a.address, typeOf(a)) || (onThisMachine(sa) && onThisMachine(a))) return true;
    }
  }
  return false;
}

export interface OutboundPolicy {
  allow: BlockList;
  self: SelfTargets;
}

/**
 * Why a request to `u` at `addresses` is refused, or null. Every address must pass: a name that resolves
 * to a public and a private address is refused (the connection could take either).
 */
export function refusedTarget(u: URL, addresses: readonly ResolvedAddress[], policy: OutboundPolicy): string | null {
  if (isSelf(u, addresses, policy.self)) return "the endpoint points at this deployment itself";
  if (addresses.length === 0) return "the host has no address";
  const said = hostOf(u).kind === "ip" ? "the address is" : "the host resolves to";
  for (const a of addresses) {
    const why = refusedAddress(a.address, policy.allow);
    if (why) return `${said} ${why}`;
  }
  return null;
}
