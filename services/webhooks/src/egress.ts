import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Which addresses a webhook may be delivered to: public ones only. This is the one place that decides;
 * a shared egress guard (public addresses only, normalization, an operator allow-list) can replace
 * `resolveAllowed` wholesale, keeping its signature.
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

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** Never a webhook's target: private, shared, link-local, multicast, reserved and documentation ranges. */
const internal = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
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
] as const) {
  internal.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 128],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  internal.addSubnet(net, bits, "ipv6");
}

/** Why an address may not be reached, or undefined when it may. */
export function refusalOf(address: string, policy: EgressPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  let ip = address;
  let type: "ipv4" | "ipv6" = family === 4 ? "ipv4" : "ipv6";
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) {
    ip = mapped[1];
    type = "ipv4";
  }
  if (loopback.check(ip, type)) {
    return policy.allowLoopback ? undefined : `${address} is a loopback address`;
  }
  if (internal.check(ip, type)) return `${address} is not a public address`;
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
