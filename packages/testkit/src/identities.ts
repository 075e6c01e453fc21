import {
  type CallerName,
  type Clients,
  callersOf,
  generateIdentitySet,
  type IdentitySet,
  identityOf,
  type ServiceIdentity,
  type ServiceName,
  services,
} from "@avatar/runtime";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, type Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

/**
 * The service identities of one test file: every server and client a test starts signs with its own key
 * of this set and trusts its public keys, as a deployment's processes do with the Secret's.
 */
export const testIdentities: IdentitySet = generateIdentitySet();

export function testIdentity(name: CallerName, now?: () => Date): ServiceIdentity {
  return identityOf(testIdentities, name, now);
}

/**
 * A client for tests of what a service does (not of who may call it): each call is signed as the first
 * caller the RPC's allow-list names. Refusals keep their own codes (no conversion to internal errors).
 */
export function allowedCallerClient<S extends DescService>(
  service: S,
  baseUrl: string,
  set: IdentitySet = testIdentities,
): Client<S> {
  const identities = new Map<CallerName, ServiceIdentity>();
  const signAsAllowed: Interceptor = (next) => async (req) => {
    const caller = callersOf(req.service.typeName, req.method.name)[0];
    if (!caller) throw new Error(`no caller is allowed to call ${req.service.name}/${req.method.name}`);
    const identity = identities.get(caller) ?? identityOf(set, caller);
    identities.set(caller, identity);
    req.header.set("authorization", `Bearer ${await identity.credential(req.service.typeName)}`);
    return next(req);
  };
  return createClient(
    service,
    createConnectTransport({
      baseUrl,
      httpVersion: "1.1",
      useBinaryFormat: true,
      interceptors: [signAsAllowed],
    }),
  );
}

/** allowedCallerClient for each service with a URL (the set is the one the services were started with). */
export function allowedCallerClients(urls: Partial<Record<ServiceName, string>>, set: IdentitySet): Clients {
  const entries = (Object.keys(services) as ServiceName[]).flatMap((name) => {
    const url = urls[name];
    return url ? [[name, allowedCallerClient(services[name], url, set)]] : [];
  });
  return Object.fromEntries(entries) as Clients;
}

/**
 * A client that signs its calls as `as` (or sends no credential), without the conversion of refusals
 * to internal errors that the suite's own clients do: for tests of who may call what.
 */
export function signedClient<S extends DescService>(
  service: S,
  baseUrl: string,
  as?: ServiceIdentity,
): Client<S> {
  const sign: Interceptor = (next) => async (req) => {
    if (as) req.header.set("authorization", `Bearer ${await as.credential(req.service.typeName)}`);
    return next(req);
  };
  return createClient(service, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [sign] }));
}

/** "ok", or the Connect code a call failed with. */
export function callOutcome(call: Promise<unknown>): Promise<Code | "ok"> {
  return call.then(
    () => "ok" as const,
    (err: unknown) => (err instanceof ConnectError ? err.code : Promise.reject(err)),
  );
}
