// Where a webhook may go: the host is resolved and every address judged (lib/platform/security/outbound.ts),
// when an endpoint is saved and before every delivery; lib/modules/webhooks/send.ts then connects to
// exactly the addresses judged here. Sends nothing itself, so the dal may use it at save.
import "server-only";
import dns from "node:dns";
import os from "node:os";
import { QuiesceError } from "../../platform/errors";
import {
  hostOf,
  localhostAddresses,
  parseCidrList,
  refusedTarget,
  type OutboundPolicy,
  type ResolvedAddress,
} from "../../platform/security/outbound";
import { integrationsConfig, type IntegrationsConfig } from "../../platform/config/integrations";
import { refuseEndpointUrl } from "./events";

/** Every address of a host name. Injectable so a test can play a resolver that changes its answer. */
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: LookupAll = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** The non-public CIDRs one kind of outbound request may reach anyway, and the setting that lists them. */
export interface AllowPrivate {
  cidrs: readonly string[];
  setting: string;
}

/** How long saving an endpoint waits for its name to resolve. */
export const SAVE_LOOKUP_MS = 5_000;

/** The policy from the current settings: the allowed CIDRs, this deployment's origins and this machine's addresses. */
export function outboundPolicy(
  cfg: IntegrationsConfig = integrationsConfig(),
  exceptions: AllowPrivate = { cidrs: cfg.webhook.allowPrivate, setting: "QUIESCE_WEBHOOK_ALLOW_PRIVATE" },
): OutboundPolicy {
  const allow = parseCidrList(exceptions.cidrs.join(","));
  if (!allow.ok) throw new QuiesceError("bad_request", `${exceptions.setting}: ${JSON.stringify(allow.bad)} is not a CIDR`);
  const localAddresses = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  return { allow: allow.list, self: { origins: cfg.selfOrigins, localAddresses } };
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e as Error);
      },
    );
  });
}

export type TargetCheck =
  | { ok: true; addresses: ResolvedAddress[] }
  /** `unresolved`: the name has no address now (nothing to connect to, nothing to judge). */
  | { ok: false; reason: string; unresolved: boolean };

/** Resolves the URL's host (within `signal`) and judges every address it has. */
export async function checkWebhookTarget(
  u: URL,
  opts: { signal: AbortSignal; lookup?: LookupAll; policy?: OutboundPolicy },
): Promise<TargetCheck> {
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return { ok: false, reason: "only http and https endpoints are allowed", unresolved: false };
  const host = hostOf(u);
  let addresses: ResolvedAddress[];
  if (host.kind === "ip") addresses = [host.address];
  else {
    const local = localhostAddresses(host.name);
    try {
      addresses = local ?? (await abortable((opts.lookup ?? systemLookup)(host.name), opts.signal));
    } catch (e) {
      return {
        ok: false,
        reason: `the host does not resolve (${(e as { code?: string }).code ?? (e as Error).message})`,
        unresolved: true,
      };
    }
  }
  const refused = refusedTarget(u, addresses, opts.policy ?? outboundPolicy());
  if (refused) return { ok: false, reason: refused, unresolved: false };
  return { ok: true, addresses };
}

/**
 * Why an outbound URL an admin saves is refused, or null: http(s), no credentials, never this deployment,
 * and every address of its host public or inside the exceptions. A name that does not resolve is refused:
 * unlike a webhook's, nothing judges it again before connecting.
 */
export async function refuseOutboundUrl(text: string, exceptions: AllowPrivate, lookup?: LookupAll): Promise<string | null> {
  const cfg = integrationsConfig();
  const early = refuseEndpointUrl(text, cfg.selfOrigins);
  if (early) return early;
  const policy = outboundPolicy(cfg, exceptions);
  const target = await checkWebhookTarget(new URL(text), { signal: AbortSignal.timeout(SAVE_LOOKUP_MS), lookup, policy });
  if (target.ok) return null;
  return target.unresolved ? target.reason : `${target.reason} (reachable only when ${exceptions.setting} lists it)`;
}
