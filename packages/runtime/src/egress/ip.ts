import { isIPv4, isIPv6 } from "node:net";

/**
 * IP addresses as bytes, CIDR ranges, and the one question egress asks of an address: is it a public
 * unicast address of the internet? Everything else (loopback, private, link-local and cloud metadata,
 * CGNAT, multicast, unspecified, documentation and reserved ranges, and the IPv6 forms that carry such
 * an IPv4 address) is not.
 */

export interface IpAddress {
  version: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: number[];
}

/** Parses a literal address (IPv6 with or without brackets or a zone); undefined for anything else. */
export function parseIp(text: string): IpAddress | undefined {
  let t = text.trim();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1);
  const zone = t.indexOf("%");
  if (zone >= 0 && isIPv6(t)) t = t.slice(0, zone);
  if (isIPv4(t)) return { version: 4, bytes: t.split(".").map(Number) };
  if (!isIPv6(t)) return undefined;
  return { version: 6, bytes: ipv6Bytes(t) };
}

function ipv6Bytes(text: string): number[] {
  let t = text;
  const tail: number[] = [];
  const lastColon = t.lastIndexOf(":");
  if (t.slice(lastColon + 1).includes(".")) {
    tail.push(
      ...t
        .slice(lastColon + 1)
        .split(".")
        .map(Number),
    );
    t = `${t.slice(0, lastColon + 1)}0:0`;
  }
  const [head = "", rest] = t.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

export interface Cidr {
  version: 4 | 6;
  bytes: number[];
  prefix: number;
}

/** `10.0.0.0/8`, `fd00::/8`, or one address (a /32 or /128); undefined when it is neither. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) return undefined;
  const max = ip.version === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return undefined;
  return { ...ip, prefix: Number(prefixText) };
}

export function cidrContains(range: Cidr, ip: IpAddress): boolean {
  if (range.version !== ip.version) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((range.bytes[i] ?? 0) & mask) !== ((ip.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const cidrs = (list: string[]): Cidr[] =>
  list.map((text) => {
    const range = parseCidr(text);
    if (!range) throw new Error(`bad built-in range ${text}`);
    return range;
  });

/** IPv4 ranges that are not public unicast (RFC 6890 and friends). */
const IPV4_NOT_PUBLIC = cidrs([
  "0.0.0.0/8", // "this network", unspecified
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT (also some clouds' metadata, e.g. 100.100.100.200)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, cloud metadata (169.254.169.254)
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
]);

/** IPv6 ranges whose low 32 bits are an IPv4 address that decides. */
const IPV6_CARRYING_IPV4 = cidrs([
  "::ffff:0:0/96", // IPv4-mapped
  "64:ff9b::/96", // NAT64 well-known prefix
]);

/** IPv6 inside global unicast (2000::/3) that is still not public. */
const IPV6_NOT_PUBLIC = cidrs([
  "2001::/23", // IETF protocol assignments (Teredo, ORCHID, benchmarking...)
  "2001:db8::/32", // documentation
  "2002::/16", // 6to4: carries an IPv4 address; refused rather than decoded
  "3fff::/20", // documentation
]);
const IPV6_GLOBAL_UNICAST = cidrs(["2000::/3"]);

/** True only for a public unicast address. */
export function isPublicIp(ip: IpAddress): boolean {
  if (ip.version === 4) return !IPV4_NOT_PUBLIC.some((r) => cidrContains(r, ip));
  if (IPV6_CARRYING_IPV4.some((r) => cidrContains(r, ip))) {
    return isPublicIp({ version: 4, bytes: ip.bytes.slice(12) });
  }
  // Loopback, unspecified, IPv4-compatible, ULA (fc00::/7, also metadata fd00:ec2::254), link-local,
  // site-local and multicast all lie outside 2000::/3.
  if (!IPV6_GLOBAL_UNICAST.some((r) => cidrContains(r, ip))) return false;
  return !IPV6_NOT_PUBLIC.some((r) => cidrContains(r, ip));
}
