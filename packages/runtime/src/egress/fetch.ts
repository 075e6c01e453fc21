import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { parseIp } from "./ip.js";
import { type EgressPolicy, isAllowedAddress, isAllowedAddressText, isTrustedTarget } from "./policy.js";
import { EgressError, parseEgressUrl } from "./url.js";

/** One resolved address, as `dns.lookup(host, {all: true})` answers. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Name resolution; `dns.lookup` (the system resolver) unless a test gives its own. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface EgressRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** A fetch for customer-supplied URLs: same Response as fetch, but only to where the policy allows. */
export type EgressFetch = (url: string | URL, init?: EgressRequestInit) => Promise<Response>;

/**
 * Checks where `url` leads without connecting: its shape, then (unless the operator trusts the host)
 * every address it resolves to. Resolves to the addresses; rejects with an EgressError. For a check when
 * a URL is stored (a webhook, a base_url); the request itself must still go through an EgressFetch,
 * because DNS may answer differently by then.
 */
export async function checkEgressTarget(
  url: string | URL,
  policy: EgressPolicy,
  resolve: Resolve = systemResolve,
): Promise<ResolvedAddress[]> {
  const target = parseEgressUrl(url);
  const literal = parseIp(target.hostname);
  if (literal) {
    if (!isTrustedTarget(target, policy) && !isAllowedAddress(literal, policy)) throw notAllowed(target);
    return [{ address: target.hostname.replace(/^\[|\]$/g, ""), family: literal.version }];
  }
  const addresses = await resolveOrFail(target.hostname, resolve);
  if (!isTrustedTarget(target, policy) && !addresses.every((a) => isAllowedAddressText(a.address, policy))) {
    throw notAllowed(target);
  }
  return addresses;
}

/**
 * The checked fetch. The URL must have the egress shape (http/https, no user info, no fragment); the
 * connection goes only to an address that passed the check, because the check is the name lookup the
 * socket connects with (a DNS answer that changes between check and connect cannot slip through). A host
 * that resolves to any address that is not allowed is refused as a whole. Redirects are not followed: a
 * 3xx answer comes back as it is. Proxy settings of the environment are not used.
 */
export function createEgressFetch(
  policy: EgressPolicy,
  options: { resolve?: Resolve; keepAlive?: boolean } = {},
): EgressFetch {
  const resolve = options.resolve ?? systemResolve;
  // Own agents: their pooled sockets were all opened through the guarded lookup.
  const agents = {
    "http:": new http.Agent({ keepAlive: options.keepAlive ?? true }),
    "https:": new https.Agent({ keepAlive: options.keepAlive ?? true }),
  };

  const guardedLookup = (target: URL): LookupFunction => {
    return (hostname, lookupOptions, callback) => {
      const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
      resolveOrFail(hostname, resolve)
        .then((all) => {
          const usable = all.filter((a) => family === 0 || a.family === family);
          if (usable.length === 0) throw new EgressError(`${target.hostname} has no address`, "unresolvable");
          if (!all.every((a) => isAllowedAddressText(a.address, policy))) throw notAllowed(target);
          const first = usable[0] as ResolvedAddress;
          if (lookupOptions.all) callback(null, usable);
          else callback(null, first.address, first.family);
        })
        .catch((err: Error) => callback(err as NodeJS.ErrnoException, "", 0));
    };
  };

  return async (input, init = {}) => {
    const target = parseEgressUrl(input);
    const trusted = isTrustedTarget(target, policy);
    const literal = parseIp(target.hostname);
    if (literal && !trusted && !isAllowedAddress(literal, policy)) throw notAllowed(target);
    init.signal?.throwIfAborted();

    const headers: Record<string, string> = { ...init.headers };
    const body = init.body === undefined ? undefined : Buffer.from(init.body);
    if (body && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length")) {
      headers["content-length"] = String(body.length);
    }
    const method = (init.method ?? "GET").toUpperCase();
    const transport = target.protocol === "https:" ? https : http;
    return new Promise<Response>((resolvePromise, reject) => {
      const req = transport.request(target, {
        method,
        headers,
        agent: agents[target.protocol as "http:" | "https:"],
        ...(trusted || literal ? {} : { lookup: guardedLookup(target) }),
        ...(init.signal ? { signal: init.signal } : {}),
      });
      // As fetch does: an aborted request rejects with the signal's reason (e.g. a TimeoutError).
      req.once("error", (err) => reject(init.signal?.aborted ? init.signal.reason : err));
      req.once("response", (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(new EgressError(`${target.host} answered with status ${status}`, "unresolvable"));
          return;
        }
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
          else if (value !== undefined) responseHeaders.set(name, value);
        }
        const empty = method === "HEAD" || status === 204 || status === 205 || status === 304;
        if (empty) res.resume();
        const stream = empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        resolvePromise(
          new Response(stream, { status, statusText: res.statusMessage ?? "", headers: responseHeaders }),
        );
      });
      req.end(body);
    });
  };
}

async function resolveOrFail(hostname: string, resolve: Resolve): Promise<ResolvedAddress[]> {
  try {
    const all = await resolve(hostname);
    if (all.length > 0) return all;
  } catch {
    // reported below, without the resolver's own words
  }
  throw new EgressError(`${hostname} could not be resolved`, "unresolvable");
}

function notAllowed(target: URL): EgressError {
  return new EgressError(
    `${target.hostname} is not a public address and not allowed for outgoing requests`,
    "address_not_allowed",
  );
}
