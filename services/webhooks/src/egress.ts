import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { cidrContains, isPublicIp, parseCidr, parseIp } from "@avatar/runtime";

/**
 * Which addresses a webhook may be delivered to: public ones only, as the runtime's egress guard judges
 * them (packages/runtime/src/egress), plus loopback when the operator allows it for development.
 *
 * The name is resolved here and the connection is made to the address that was checked (deliver.ts
 * passes it as the socket's lookup), so a name cannot resolve to a public address for the check and to
 * an internal one for the connection (DNS rebinding).
 */

export class EgressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EgressRefused";
  }
}

export interface EgressPolicy {
  /** Loopback receivers (127.0.0.0/8, ::1) are allowed: local development only. */
  allowLoopback: boolean;
  /** Name resolution (tests give their own). */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

const LOOPBACK = [parseCidr("127.0.0.0/8"), parseCidr("::1/128")].filter((c) => c !== undefined);

/**
 * Why an address may not be reached, or undefined when it may: the runtime's egress guard decides what
 * is public (runtime/egress/ip.ts: private, shared, link-local and metadata, multicast, reserved and
 * documentation ranges, and every IPv6 form carrying such an IPv4 address are not); loopback only when
 * the operator allows it.
 */
export function refusalOf(address: string, policy: EgressPolicy): string | undefined {
  const ip = parseIp(address);
  if (!ip) return `${address} is not an IP address`;
  const mapped = ip.version === 6 && ip.bytes.slice(0, 12).join() === "0,0,0,0,0,0,0,0,0,0,255,255";
  const judged = mapped ? { version: 4 as const, bytes: ip.bytes.slice(12) } : ip;
  if (LOOPBACK.some((range) => cidrContains(range, judged))) {
    return policy.allowLoopback ? undefined : `${address} is a loopback address`;
  }
  if (!isPublicIp(judged)) return `${address} is not a public address`;
  return undefined;
}

const systemResolve = (host: string) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The address to connect to for `hostname`: every address it resolves to must be allowed (one bad
 * answer refuses them all). Throws EgressRefused otherwise.
 */
export async function resolveAllowed(
  hostname: string,
  policy: EgressPolicy,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  const literal = isIP(host);
  let addresses: { address: string; family: number }[];
  if (literal !== 0) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolve)(host);
    } catch (err) {
      throw new EgressRefused(`${host} did not resolve: ${(err as Error).message}`);
    }
  }
  if (addresses.length === 0) throw new EgressRefused(`${host} did not resolve`);
  for (const a of addresses) {
    const why = refusalOf(a.address, policy);
    if (why) throw new EgressRefused(`${host}: ${why}`);
  }
  const first = addresses[0] as { address: string; family: number };
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
