import type { Env } from "../config.js";
import { type Cidr, cidrContains, type IpAddress, isPublicIp, parseCidr, parseIp } from "./ip.js";

/**
 * Where customer-supplied URLs may lead. Public addresses always; besides them only what the operator
 * allowed: the endpoints it configured itself (`LOCAL_LLM_URL`, every `PROVIDER_*_URL`, trusted by exact
 * origin) and the entries of `EGRESS_ALLOW`, for self-hosted models on internal addresses:
 *
 * - `https://llm.internal:8443` an origin (scheme, host and port must all match);
 * - `llm.internal` or `llm.internal:8000` a host name, on any or on one port;
 * - `*.models.internal` every host under a domain;
 * - `10.20.0.0/16`, `10.20.0.7`, `fd00:1::/64` addresses any host may resolve to.
 *
 * Entries are separated by commas or white space. A host or origin entry is trusted whatever it resolves
 * to (its DNS is the operator's); an address entry is checked against every address a host resolves to.
 */
export interface EgressPolicy {
  readonly origins: ReadonlySet<string>;
  readonly hosts: readonly { host: string; port: string | undefined }[];
  readonly domains: readonly string[];
  readonly ranges: readonly Cidr[];
}

export const EGRESS_ALLOW = "EGRESS_ALLOW";

/** The policy from explicit entries (EGRESS_ALLOW syntax) and the operator's own endpoint URLs. */
export function egressPolicy(options: { allow?: readonly string[]; trustedUrls?: readonly string[] } = {}) {
  const origins = new Set<string>();
  const hosts: { host: string; port: string | undefined }[] = [];
  const domains: string[] = [];
  const ranges: Cidr[] = [];
  for (const url of options.trustedUrls ?? []) {
    const origin = originOf(url);
    if (origin) origins.add(origin);
  }
  for (const raw of options.allow ?? []) {
    const entry = raw.trim();
    if (entry === "") continue;
    if (entry.includes("://")) {
      const origin = originOf(entry);
      if (!origin) throw new Error(`${EGRESS_ALLOW}: "${entry}" is not an http(s) origin`);
      origins.add(origin);
      continue;
    }
    const range = parseCidr(entry);
    if (range) {
      ranges.push(range);
      continue;
    }
    if (entry.startsWith("*.")) {
      domains.push(entry.slice(1).toLowerCase());
      continue;
    }
    const hostPort = /^(\[[^\]]+\]|[^:[\]/]+)(?::(\d{1,5}))?$/.exec(entry);
    if (!hostPort?.[1] || !URL.canParse(`http://${entry}/`)) {
      throw new Error(`${EGRESS_ALLOW}: "${entry}" is not a host, host:port, *.domain, origin or CIDR`);
    }
    hosts.push({ host: new URL(`http://${hostPort[1]}/`).hostname, port: hostPort[2] });
  }
  return { origins, hosts, domains, ranges } satisfies EgressPolicy;
}

/** The entries of EGRESS_ALLOW in `env` (comma- or space-separated). */
export function egressAllowEntries(env: Env): string[] {
  return (env[EGRESS_ALLOW] ?? "").split(/[\s,]+/);
}

/** EGRESS_ALLOW plus LOCAL_LLM_URL and every PROVIDER_*_URL set in `env`. */
export function readEgressPolicy(env: Env): EgressPolicy {
  const trustedUrls = Object.entries(env)
    .filter(([name, value]) => value && (name === "LOCAL_LLM_URL" || /^PROVIDER_[A-Z0-9_]+_URL$/.test(name)))
    .map(([, value]) => value as string);
  return egressPolicy({ allow: egressAllowEntries(env), trustedUrls });
}

/** True when the operator trusts this URL's host as it is (no address check). */
export function isTrustedTarget(url: URL, policy: EgressPolicy): boolean {
  if (policy.origins.has(originOf(url.href) ?? "")) return true;
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  if (policy.hosts.some((h) => h.host === host && (h.port === undefined || h.port === port))) return true;
  return policy.domains.some((suffix) => host.endsWith(suffix));
}

/** True for a public address, or one inside a range the operator allowed. */
export function isAllowedAddress(ip: IpAddress, policy: EgressPolicy): boolean {
  return isPublicIp(ip) || policy.ranges.some((r) => cidrContains(r, ip));
}

/** An address literal (e.g. from DNS) checked against the policy; false for anything not an address. */
export function isAllowedAddressText(address: string, policy: EgressPolicy): boolean {
  const ip = parseIp(address);
  return ip !== undefined && isAllowedAddress(ip, policy);
}

const ORIGIN_SCHEMES: Record<string, string> = {
  "http:": "http",
  "ws:": "http",
  "https:": "https",
  "wss:": "https",
};

/** `scheme://host:port` with the default port written out; ws(s) counts as http(s). */
function originOf(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const scheme = ORIGIN_SCHEMES[url.protocol];
  if (!scheme) return undefined;
  const port = url.port || (scheme === "https" ? "443" : "80");
  return `${scheme}://${url.hostname.toLowerCase()}:${port}`;
}
