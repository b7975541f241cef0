// Which addresses a webhook may reach: every spelling WHATWG URL accepts of a non-public address is
// refused once it is an address, an allowed CIDR lets exactly its addresses through, and the deployment's
// own ports stay out however the loopback address is written.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { BlockList } from "node:net";
import {
  hostOf,
  isSelf,
  localhostAddresses,
  nonPublicRange,
  parseCidrList,
  refusedAddress,
  refusedTarget,
  type ResolvedAddress,
} from "./outbound";
import { CONFIG } from "../config";

const NONE = new BlockList();
const policy = (allow = NONE, origins: string[] = []) => ({ allow, self: { origins, localAddresses: [] } });

/** What a URL's host becomes once WHATWG has read it and any name has been resolved by `resolve`. */
function judge(urlText: string, resolve: (name: string) => ResolvedAddress[] = () => [], allow = NONE, origins: string[] = []) {
  const u = new URL(urlText);
  const h = hostOf(u);
  const addresses = h.kind === "ip" ? [h.address] : (localhostAddresses(h.name) ?? resolve(h.name));
  return refusedTarget(u, addresses, policy(allow, origins));
}

// The IPv4 ranges a webhook may not reach, written out independently of the module's table.
const V4_DENIED: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const toInt = (a: string) => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const toDotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
const inV4Denied = (n: number) => V4_DENIED.some(([net, p]) => Math.floor(n / 2 ** (32 - p)) === Math.floor(toInt(net) / 2 ** (32 - p)));
const deniedV4 = fc
  .constantFrom(...V4_DENIED)
  .chain(([net, p]) => fc.integer({ min: 0, max: 2 ** (32 - p) - 1 }).map((off) => toInt(net) + off));
const hex = (n: number) => n.toString(16);

/** Ways a URL may spell one IPv4 address; WHATWG turns each into the dotted form or an IPv6 literal. */
function spellings(n: number): string[] {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  return [
    toDotted(n),
    String(n),
    `0x${hex(n)}`,
    `0${n.toString(8)}`,
    `${a}.${(b << 16) | (c << 8) | d}`,
    `${a}.${b}.${(c << 8) | d}`,
    `0x${hex(a)}.0${b.toString(8)}.${c}.0x${hex(d)}`,
    `${toDotted(n)}.`,
    `[::ffff:${toDotted(n)}]`,
    `[::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}]`,
    `[0:0:0:0:0:FFFF:${toDotted(n)}]`,
  ];
}

describe("addresses", () => {
  test.each([
    ["http://169.254.169.254/latest/meta-data/", /link-local/],
    ["http://10.0.0.1/", /private/],
    ["http://[fd00::1]/", /unique local/],
    ["http://[::ffff:127.0.0.1]:3000/", /loopback/],
    ["http://[::ffff:169.254.169.254]/", /link-local/],
    ["http://[::]/", /unspecified/],
    ["http://0.0.0.0:5432/", /unspecified/],
    ["http://0/", /unspecified/],
    ["http://0x7f.1/", /loopback/],
    ["http://2130706433/", /loopback/],
    ["http://127.1/", /loopback/],
    ["http://0177.0.0.1/", /loopback/],
    ["http://%31%32%37.0.0.1/", /loopback/],
    ["http://localhost./", /loopback/],
    ["http://LOCALHOST/", /loopback/],
    ["http://api.localhost/", /loopback/],
    ["http://[::1]/", /loopback/],
    ["http://100.64.0.1/", /carrier-grade NAT/],
    ["http://172.31.255.255/", /private/],
    ["http://192.168.1.1/", /private/],
    ["http://224.0.0.1/", /multicast/],
    ["http://255.255.255.255/", /broadcast/],
    ["http://[ff02::1]/", /multicast/],
    ["http://[fe80::1]/", /link-local/],
    ["http://[fc00::1]/", /unique local/],
    ["http://[::7f00:1]/", /reserved/],
    ["http://[::ffff:0:7f00:1]/", /reserved/],
    ["http://[64:ff9b::a9fe:a9fe]/", /NAT64/],
    ["http://[2002:7f00:1::]/", /6to4/],
    ["http://[2001::7f00:1]/", /reserved/],
    ["http://[2001:db8::1]/", /documentation/],
  ])("%s is refused", (url, why) => {
    expect(judge(url)).toMatch(why);
  });

  test("public addresses pass, literal or resolved", () => {
    expect(judge("https://93.184.215.14/")).toBeNull();
    expect(judge("https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/")).toBeNull();
    expect(judge("https://[::ffff:93.184.215.14]/")).toBeNull();
    expect(judge("https://hooks.example.com/", () => [{ address: "93.184.215.14", family: 4 }])).toBeNull();
    expect(judge("http://172.32.0.1/")).toBeNull();
    expect(judge("http://100.128.0.1/")).toBeNull();
  });

  test("a name is judged by what it resolves to: one non-public address among public ones refuses it", () => {
    const dns: Record<string, ResolvedAddress[]> = {
      "metadata.internal": [{ address: "169.254.169.254", family: 4 }],
      "mixed.example": [
        { address: "93.184.215.14", family: 4 },
        { address: "fd12:3456::1", family: 6 },
      ],
      "mapped.example": [{ address: "::ffff:10.1.2.3", family: 6 }],
      "zoned.example": [{ address: "fe80::1%eth0", family: 6 }],
    };
    const resolve = (n: string) => dns[n] ?? [];
    expect(judge("http://metadata.internal/", resolve)).toMatch(/^the host resolves to a link-local/);
    expect(judge("http://mixed.example/", resolve)).toMatch(/unique local/);
    expect(judge("http://mapped.example/", resolve)).toMatch(/private/);
    expect(judge("http://zoned.example/", resolve)).toMatch(/link-local/);
    expect(judge("http://nothing.example/", resolve)).toMatch(/no address/);
  });

  test("property: every spelling of an address in a denied IPv4 range is refused after WHATWG reads it", () => {
    fc.assert(
      fc.property(deniedV4, (n) => {
        for (const s of spellings(n)) expect(judge(`http://${s}:8080/x`), s).not.toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  test("property: an IPv4 address is refused exactly when it lies in a denied range, in every spelling", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        for (const s of spellings(n)) expect(judge(`https://${s}/`) !== null, `${s} (${toDotted(n)})`).toBe(inV4Denied(n));
      }),
      { numRuns: 3000 },
    );
  });

  test("property: ULA, link-local and multicast IPv6 are refused, compressed or not", () => {
    const hextets = (first: fc.Arbitrary<number>) =>
      fc.tuple(first, ...Array.from({ length: 7 }, () => fc.integer({ min: 0, max: 0xffff })));
    const v6 = fc.oneof(
      hextets(fc.integer({ min: 0xfc00, max: 0xfdff })),
      hextets(fc.integer({ min: 0xfe80, max: 0xfebf })),
      hextets(fc.integer({ min: 0xff00, max: 0xffff })),
    );
    fc.assert(
      fc.property(v6, fc.boolean(), (h, upper) => {
        const text = h.map(hex).join(":");
        expect(judge(`http://[${upper ? text.toUpperCase() : text}]/`)).not.toBeNull();
      }),
      { numRuns: 1000 },
    );
  });

  test("nonPublicRange names the range; a non-address is not public", () => {
    expect(nonPublicRange("127.0.0.1")).toBe("a loopback address");
    expect(nonPublicRange("::1")).toBe("a loopback address");
    expect(nonPublicRange("8.8.8.8")).toBeNull();
    expect(nonPublicRange("example.com")).toBe("not an IP address");
  });
});

describe("the allow list", () => {
  test("an allowed CIDR lets its addresses through in any spelling, and nothing next to it", () => {
    const r = parseCidrList("127.0.0.1/32, 10.20.0.0/16,fd00:1::/32");
    if (!r.ok) throw new Error(r.bad);
    expect(r.cidrs).toEqual(["127.0.0.1/32", "10.20.0.0/16", "fd00:1::/32"]);
    for (const ok of [
      "http://127.0.0.1:9/",
      "http://[::ffff:127.0.0.1]/",
      "http://0x7f000001/",
      "http://10.20.255.1/",
      "http://[fd00:1::5]/",
    ])
      expect(judge(ok, undefined, r.list), ok).toBeNull();
    for (const no of ["http://127.0.0.2/", "http://10.21.0.1/", "http://[fd00:2::5]/", "http://[::1]/", "http://169.254.169.254/"])
      expect(judge(no, undefined, r.list), no).not.toBeNull();
    // localhost is 127.0.0.1 and ::1: with only the first allowed, the name is still refused.
    expect(judge("http://localhost:9/", undefined, r.list)).toMatch(/loopback/);
  });

  test("property: an address inside an allowed CIDR is accepted, whatever its range", () => {
    fc.assert(
      fc.property(deniedV4, fc.integer({ min: 0, max: 32 }), (n, prefix) => {
        const net = prefix === 0 ? 0 : Math.floor(n / 2 ** (32 - prefix)) * 2 ** (32 - prefix);
        const r = parseCidrList(`${toDotted(net)}/${prefix}`);
        if (!r.ok) throw new Error(r.bad);
        expect(refusedAddress(toDotted(n), r.list)).toBeNull();
        expect(refusedAddress(`::ffff:${toDotted(n)}`, r.list)).toBeNull();
      }),
    );
  });

  test("bad items are named; the setting refuses what the list refuses", () => {
    for (const bad of [
      "127.0.0.1/33",
      "10.0.0/8",
      "127.1",
      "example.com",
      "::1/129",
      "fe80::1%eth0",
      "1.2.3.4/",
      "10.0.0.0/8/8",
      "0x7f.0.0.1",
    ]) {
      expect(parseCidrList(`10.0.0.0/8,${bad}`)).toEqual({ ok: false, bad });
      expect(CONFIG.QUIESCE_WEBHOOK_ALLOW_PRIVATE.parse(`10.0.0.0/8,${bad}`).ok, bad).toBe(false);
    }
    for (const good of ["127.0.0.1/32", "10.0.0.0/8, fd00::/8", "::1", "::ffff:127.0.0.1/128", "0.0.0.0/0", " 192.168.0.0/16 ,"]) {
      expect(parseCidrList(good).ok, good).toBe(true);
      expect(CONFIG.QUIESCE_WEBHOOK_ALLOW_PRIVATE.parse(good), good).toEqual({
        ok: true,
        value: good
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      });
    }
    expect(CONFIG.QUIESCE_WEBHOOK_ALLOW_PRIVATE.fallback).toEqual([]);
  });
});

describe("this deployment itself", () => {
  const origins = ["http://127.0.0.1:3000", "http://localhost:3001", "https://quiesce.example.com"];
  const everywhere = new BlockList();
  everywhere.addSubnet("0.0.0.0", 0, "ipv4");
  everywhere.addSubnet("::", 0, "ipv6");

  test.each([
    "http://127.0.0.1:3000/api/v1/runs",
    "http://[::ffff:127.0.0.1]:3000/",
    "http://localhost.:3000/",
    "http://[::]:3000/",
    "http://0.0.0.0:3001/",
    "http://127.0.0.2:3001/",
    "http://0x7f.1:3000/",
    "http://[::1]:3001/",
    "https://QUIESCE.example.com./x",
  ])("%s is this deployment even with every address allowed", (url) => {
    expect(judge(url, () => [], everywhere, origins)).toMatch(/itself/);
  });

  test("other ports and hosts are not; an own interface address on an own port is", () => {
    expect(judge("http://127.0.0.1:3002/", () => [], everywhere, origins)).toBeNull();
    expect(judge("https://hooks.example.com/", () => [{ address: "93.184.215.14", family: 4 }], everywhere, origins)).toBeNull();
    const u = new URL("http://10.1.2.3:3000/");
    expect(isSelf(u, [{ address: "10.1.2.3", family: 4 }], { origins, localAddresses: [] })).toBe(false);
    expect(isSelf(u, [{ address: "10.1.2.3", family: 4 }], { origins, localAddresses: ["10.1.2.3"] })).toBe(true);
  });
});
