import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import type { Setting } from "@avatar/runtime";

/**
 * Which peers may speak for the client: X-Forwarded-For and X-Forwarded-Proto count only when the
 * connection comes from a trusted proxy (TRUSTED_PROXIES, CIDRs such as the ingress controller's pod
 * network). The client is the right-most address of X-Forwarded-For that is not itself a trusted proxy:
 * the left part of the header is whatever the client sent, so it is never taken on trust.
 */
export interface ProxyTrust {
  trusts(address: string): boolean;
  readonly any: boolean;
}

export const trustNobody: ProxyTrust = { trusts: () => false, any: false };
/** TRUST_PROXY=true, the older setting: every peer is a trusted proxy. */
export const trustEveryone: ProxyTrust = { trusts: () => true, any: true };

/** "10.0.0.0/8, fd00::/8, 192.0.2.7": a list of CIDRs or single addresses; throws on a bad entry. */
export function parseTrustedProxies(text: string): ProxyTrust {
  const list = new BlockList();
  let count = 0;
  for (const entry of text.split(",").map((e) => e.trim())) {
    if (!entry) continue;
    const [address = "", bits, ...rest] = entry.split("/");
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    const max = family === 6 ? 128 : 32;
    if (
      !family ||
      rest.length > 0 ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > max ||
      bits === ""
    ) {
      throw new Error(`"${entry}" is not an address or CIDR`);
    }
    list.addSubnet(address, prefix, family === 6 ? "ipv6" : "ipv4");
    count++;
  }
  if (count === 0) return trustNobody;
  return {
    any: true,
    trusts: (address) => {
      const plain = unmapped(address);
      const family = isIP(plain);
      return family !== 0 && list.check(plain, family === 6 ? "ipv6" : "ipv4");
    },
  };
}

export const trustedProxiesSetting: Setting<ProxyTrust> = {
  describe: "a comma-separated list of CIDRs (e.g. 10.0.0.0/8,fd00::/8)",
  parse: parseTrustedProxies,
  fallback: () => trustNobody,
};

/** The TRUSTED_PROXIES list, or everyone under the older TRUST_PROXY=true. */
export function proxyTrust(config: { TRUSTED_PROXIES: ProxyTrust; TRUST_PROXY: boolean }): ProxyTrust {
  if (config.TRUSTED_PROXIES.any) return config.TRUSTED_PROXIES;
  return config.TRUST_PROXY ? trustEveryone : trustNobody;
}

/** The client's address as far as trusted proxies vouch for it. */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string {
  const peer = unmapped(req.socket.remoteAddress ?? "");
  if (!peer) return "unknown";
  if (!trust.trusts(peer)) return peer;
  const hops = headerList(req, "x-forwarded-for");
  let nearest = peer;
  for (const hop of hops.reverse()) {
    const address = unmapped(hop);
    if (isIP(address) === 0) return nearest;
    if (!trust.trusts(address)) return address;
    nearest = address;
  }
  return nearest;
}

/**
 * The scheme the client used, when a trusted proxy says so: X-Forwarded-Proto, else the standard
 * Forwarded header's `proto` (RFC 7239). The last element is the one the trusted peer wrote; the ones
 * before it came with the request, from the client or proxies nobody vouches for.
 */
export function forwardedProto(req: IncomingMessage, trust: ProxyTrust): string | undefined {
  const peer = unmapped(req.socket.remoteAddress ?? "");
  if (!peer || !trust.trusts(peer)) return undefined;
  const standard = /(?:^|;)\s*proto\s*=\s*"?([A-Za-z]+)"?/i.exec(
    headerList(req, "forwarded").at(-1) ?? "",
  )?.[1];
  const proto = (headerList(req, "x-forwarded-proto").at(-1) ?? standard)?.toLowerCase();
  return proto === "http" || proto === "https" ? proto : undefined;
}

function headerList(req: IncomingMessage, name: string): string[] {
  const value = req.headers[name];
  const joined = Array.isArray(value) ? value.join(",") : (value ?? "");
  return joined
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** "::ffff:10.0.0.1" (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
function unmapped(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
