import { SecretType } from "@avatar/contracts/agents";
import type { Env } from "./config.js";

/**
 * Where a stored secret may be sent. A provider key goes only to the hosts of its provider type (the
 * hosts of the PROVIDER_<NAME>_URL the operator configured for that type) or to hosts the space bound to
 * the secret when it stored it (`allowed_hosts`: exact host names, or `*.domain` for every host under
 * one). Anything else, e.g. an LLM configuration pointing a space's vendorB key at another listener,
 * is refused before the key leaves.
 */

/** The PROVIDER_<NAME>_URL names whose endpoints take keys of each secret type. */
export const SECRET_TYPE_PROVIDERS: Readonly<Record<SecretType, readonly string[]>> = {
  [SecretType.UNSPECIFIED]: [],
  [SecretType.VENDORA_API_KEY]: ["VENDORA"],
  [SecretType.VENDORB_API_KEY]: ["VENDORB", "VENDORB_REALTIME"],
  [SecretType.VENDORC_API_KEY]: ["VENDORC"],
  [SecretType.VENDORD_API_KEY]: ["VENDORD"],
  [SecretType.VENDORE_API_KEY]: ["VENDORE"],
};

/** The parts of a stored secret that decide where it may go. */
export interface SecretBinding {
  secretType: SecretType;
  allowedHosts: readonly string[];
}

export interface SecretDestinations {
  /** The configured provider hosts of a secret type (lower case). */
  providerHosts(type: SecretType): string[];
  /** True when the secret may be sent to `url`'s host. */
  allows(secret: SecretBinding, url: string): boolean;
}

export function readSecretDestinations(env: Env): SecretDestinations {
  const hostsOf = (type: SecretType) =>
    SECRET_TYPE_PROVIDERS[type].flatMap((name) => {
      const raw = env[`PROVIDER_${name}_URL`];
      if (!raw || !URL.canParse(raw)) return [];
      return [new URL(raw).hostname.toLowerCase()];
    });
  return {
    providerHosts: hostsOf,
    allows(secret, url) {
      if (!URL.canParse(url)) return false;
      const host = new URL(url).hostname.toLowerCase();
      return hostsOf(secret.secretType).includes(host) || matchesBoundHost(host, secret.allowedHosts);
    },
  };
}

function matchesBoundHost(host: string, bound: readonly string[]): boolean {
  return bound.some((entry) => {
    const e = entry.toLowerCase();
    return e.startsWith("*.") ? host.endsWith(e.slice(1)) : host === e;
  });
}

/** At most this many hosts may be bound to one secret. */
export const MAX_SECRET_HOSTS = 20;

/**
 * What is wrong with an `allowed_hosts` entry (a sentence), or undefined: a host name or address as it
 * appears in a URL (no scheme, port or path), optionally `*.` and a domain.
 */
export function secretHostProblem(entry: string): string | undefined {
  const name = entry.startsWith("*.") ? entry.slice(2) : entry;
  if (name === "" || entry.length > 253) return "must be a host name of 1 to 253 characters";
  if (!URL.canParse(`http://${name}/`) || /[/:?#@\s]/.test(name.replace(/^\[.*\]$/, "v6"))) {
    return "must be a host name (no scheme, port or path), or *. followed by a domain";
  }
  const parsed = new URL(`http://${name}/`).hostname;
  if (parsed !== name.toLowerCase())
    return "must be a host name as it appears in a URL (ASCII, e.g. xn-- for international names)";
  return undefined;
}
