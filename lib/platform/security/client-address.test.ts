// The one decision of a request's source address (lib/platform/security/client-address.ts), pure: examples and
// properties over generated addresses and chains.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { isIP } from "node:net";
import { clientAddress, forwardedHops, frontAddress, normalizeAddress, parseTrustedProxies, type ForwardedHeader } from "./client-address";

const none = parseTrustedProxies("");
const headersOf =
  (h: Record<string, string>) =>
  (name: string): string | undefined =>
    h[name];
const ask = (peer: string | undefined, h: Record<string, string>, trusted = none, use: ForwardedHeader = "x-forwarded-for") =>
  clientAddress({ peer, header: headersOf(h), trusted, use });

describe("normalizeAddress", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7"],
    ["203.0.113.7:4711", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["::FFFF:cb00:7107", "203.0.113.7"],
    ["[::ffff:203.0.113.7]:80", "203.0.113.7"],
    ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["[2001:db8::1]:4711", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    [" 10.0.0.1 ", "10.0.0.1"],
  ])("%s → %s", (raw, want) => expect(normalizeAddress(raw)).toBe(want));

  test.each(["", "unknown", "_hidden", "01.2.3.4", "1.2.3", "1.2.3.4.5", "[::1", "[::1]x", "evil.example", "999.1.1.1", "::g"])(
    "%j is no address",
    (raw) => expect(normalizeAddress(raw)).toBeNull(),
  );

  test("an IPv4 address and its IPv4-mapped IPv6 forms are one address", () => {
    fc.assert(
      fc.property(fc.ipV4(), (a) => {
        expect(normalizeAddress(a)).toBe(a);
        expect(normalizeAddress(`::ffff:${a}`)).toBe(a);
        expect(normalizeAddress(`[::ffff:${a}]:443`)).toBe(a);
      }),
    );
  });

  test("IPv6 spellings of one address agree (case, zero runs, brackets)", () => {
    fc.assert(
      fc.property(fc.ipV6(), (a) => {
        const n = normalizeAddress(a);
        expect(n).not.toBeNull();
        expect(normalizeAddress(a.toUpperCase())).toBe(n);
        expect(normalizeAddress(`[${a}]:8080`)).toBe(n);
        expect(normalizeAddress(n!)).toBe(n);
      }),
    );
  });
});

describe("parseTrustedProxies", () => {
  test("addresses and ranges, IPv4, IPv6 and IPv4-mapped", () => {
    const t = parseTrustedProxies(" 10.0.0.0/8, 192.0.2.1 ,2001:db8::/32, ::ffff:172.16.0.0/108");
    expect(t.size).toBe(4);
    for (const yes of ["10.255.0.1", "192.0.2.1", "2001:db8:1::5", "172.16.3.4", normalizeAddress("::ffff:10.1.1.1")!])
      expect(t.has(yes)).toBe(true);
    for (const no of ["11.0.0.1", "192.0.2.2", "2001:db9::1", "172.32.0.1", "::1"]) expect(t.has(no)).toBe(false);
  });

  test.each(["10.0.0.0/33", "::/129", "10.0.0.1:80", "[::1]", "evil.example", "10.0.0.0/8/8", "::ffff:10.0.0.0/64", "fe80::1%eth0"])(
    "%j is refused, named",
    (entry) => expect(() => parseTrustedProxies(`127.0.0.1,${entry}`)).toThrow(entry),
  );

  test("empty trusts nobody", () => {
    expect(parseTrustedProxies(" , ").size).toBe(0);
    expect(none.has("127.0.0.1")).toBe(false);
  });
});

describe("clientAddress", () => {
  const proxy = parseTrustedProxies("10.0.0.0/8,::1");

  test("the socket's peer, whatever the headers say, when the peer is not a trusted proxy", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.string(), fc.string(), (peer, xff, fwd) => {
        fc.pre(!proxy.has(normalizeAddress(peer)!));
        const h = { "x-forwarded-for": xff, forwarded: fwd, "x-real-ip": xff };
        expect(ask(peer, h, proxy)).toBe(normalizeAddress(peer));
        expect(ask(peer, h, proxy, "forwarded")).toBe(normalizeAddress(peer));
        expect(ask(peer, h)).toBe(normalizeAddress(peer));
      }),
    );
  });

  test("no peer is 'unknown' (never a header's word for it)", () => {
    expect(ask(undefined, { "x-forwarded-for": "203.0.113.77" }, proxy)).toBe("unknown");
    expect(ask("", { "x-forwarded-for": "203.0.113.77" }, proxy)).toBe("unknown");
  });

  test("behind trusted proxies: the rightmost hop that is not one of them", () => {
    const hop = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom("10.1.2.3", "10.9.9.9", "::1"));
    fc.assert(
      fc.property(fc.array(hop, { minLength: 1, maxLength: 8 }), fc.constantFrom("10.0.0.5", "::1", "::ffff:10.0.0.7"), (chain, peer) => {
        const got = ask(peer, { "x-forwarded-for": chain.join(", ") }, proxy);
        const normalized = chain.map((c) => normalizeAddress(c)!);
        const model = [...normalized].reverse().find((a) => !proxy.has(a)) ?? normalized[0]!;
        expect(got).toBe(model);
        // The same chain in RFC 7239 form gives the same answer.
        const fwd = chain.map((c) => (c.includes(":") ? `for="[${c}]:1234"` : `for=${c};proto=https`)).join(", ");
        expect(ask(peer, { forwarded: fwd }, proxy, "forwarded")).toBe(model);
      }),
    );
  });

  test("the header the proxies do not set is ignored, and a hop that is no address stops at the proxy", () => {
    expect(ask("10.0.0.5", { forwarded: "for=203.0.113.9" }, proxy)).toBe("10.0.0.5");
    expect(ask("10.0.0.5", { "x-forwarded-for": "203.0.113.9" }, proxy, "forwarded")).toBe("10.0.0.5");
    expect(ask("10.0.0.5", { "x-forwarded-for": "203.0.113.9, garbage" }, proxy)).toBe("10.0.0.5");
    expect(ask("10.0.0.5", { "x-forwarded-for": "garbage, 203.0.113.9" }, proxy)).toBe("203.0.113.9");
    expect(ask("10.0.0.5", { forwarded: 'for="_hidden", for=unknown' }, proxy, "forwarded")).toBe("10.0.0.5");
    expect(ask("10.0.0.5", {}, proxy)).toBe("10.0.0.5");
  });

  test("never throws, and answers an IP address or 'unknown'", () => {
    fc.assert(
      fc.property(fc.option(fc.string()), fc.string(), fc.string(), (peer, xff, fwd) => {
        for (const use of ["x-forwarded-for", "forwarded"] as const) {
          const got = ask(peer ?? undefined, { "x-forwarded-for": xff, forwarded: fwd }, parseTrustedProxies("0.0.0.0/0,::/0"), use);
          expect(got === "unknown" || isIP(got) !== 0).toBe(true);
        }
      }),
    );
  });

  test("hops are bounded: a huge chain is read from its right end only", () => {
    const chain = Array.from({ length: 1000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    expect(forwardedHops(chain.join(","), "x-forwarded-for")).toHaveLength(32);
  });
});

test("frontAddress reads the one address the front wrote", () => {
  expect(frontAddress(new Headers({ "x-forwarded-for": "::ffff:198.51.100.4" }))).toBe("198.51.100.4");
  expect(frontAddress(new Headers())).toBe("unknown");
  expect(frontAddress(new Headers({ "x-forwarded-for": "not an address" }))).toBe("unknown");
});
