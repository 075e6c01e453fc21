import { AgentsService } from "@avatar/contracts/agents";
import { CatalogService } from "@avatar/contracts/catalog";
import { MemoryService } from "@avatar/contracts/memory";
import { PipelineService } from "@avatar/contracts/pipeline";
import { SessionsService } from "@avatar/contracts/sessions";
import { TokensService } from "@avatar/contracts/tokens";
import { WebhooksService } from "@avatar/contracts/webhooks";
import type { DescService } from "@bufbuild/protobuf";
import { type CallOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import { meterCalls } from "./metrics/connect.js";
import { forwardRequestId, onBehalfOf } from "./request-id.js";
import { presentIdentity, type ServiceIdentity } from "./service-identity.js";
import { traceCalls } from "./tracing/connect.js";
import { unaryTransport } from "./unary-transport.js";

/**
 * Connect clients for service-to-service calls: HTTP/1.1 keep-alive pools (a long-lived HTTP/2
 * connection would pin all traffic from one pod to one peer) through a client made for unary calls
 * (unary-transport.ts), binary protobuf, no compression (loopback and cluster networks; compressing
 * costs more CPU than the bytes it saves), request ids forwarded, calls counted and timed, the trace
 * context sent along (metrics/, tracing/), and every call signed with the caller's service identity.
 */
export function connectTransport(baseUrl: string, identity: ServiceIdentity): Transport {
  return unaryTransport({
    baseUrl,
    interceptors: [forwardRequestId, meterCalls, traceCalls, presentIdentity(identity)],
    defaultTimeoutMs: 15_000,
  });
}

export function connectClient<S extends DescService>(
  service: S,
  baseUrl: string,
  identity: ServiceIdentity,
): Client<S> {
  return createClient(service, connectTransport(baseUrl, identity));
}

export const services = {
  tokens: TokensService,
  sessions: SessionsService,
  catalog: CatalogService,
  agents: AgentsService,
  memory: MemoryService,
  pipeline: PipelineService,
  webhooks: WebhooksService,
} as const;

export type ServiceName = keyof typeof services;
export type ServiceUrls = Partial<Record<ServiceName, string>>;
export type Clients = { [K in ServiceName]: Client<(typeof services)[K]> };

/**
 * A client per service. Asking for a service whose URL was not configured throws a clear error at the
 * first call site instead of failing at start for services a process never calls.
 */
export function createClients(urls: ServiceUrls, identity: ServiceIdentity): Clients {
  const made = new Map<ServiceName, unknown>();
  return new Proxy({} as Clients, {
    get(_target, prop) {
      const name = prop as ServiceName;
      if (!(name in services)) return undefined;
      if (!made.has(name)) {
        const url = urls[name];
        if (!url) throw new Error(`no URL configured for the ${name} service (${name.toUpperCase()}_URL)`);
        made.set(name, connectClient(services[name], url, identity));
      }
      return made.get(name);
    },
  });
}

type AnyCall = (request: unknown, options?: CallOptions) => unknown;

/**
 * `clients` whose every call is made on behalf of request `requestId` (onBehalfOf): a gateway route's
 * calls, so that the services' log lines name the request they served. Each service's client is wrapped
 * when first used.
 */
export function clientsOnBehalfOf(clients: Clients, requestId: string): Clients {
  const options = onBehalfOf(requestId);
  const wrapped = new Map<PropertyKey, unknown>();
  const wrap = (client: Record<string, AnyCall>) =>
    new Proxy(client, {
      get: (target, method) => {
        const call = target[method as string];
        if (typeof call !== "function") return call;
        return (request: unknown, own?: CallOptions) => call(request, own ? { ...options, ...own } : options);
      },
    });
  return new Proxy(clients, {
    get(target, name) {
      let client = wrapped.get(name);
      if (client === undefined) {
        const own = target[name as ServiceName] as unknown;
        if (typeof own !== "object" || own === null) return own;
        client = wrap(own as Record<string, AnyCall>);
        wrapped.set(name, client);
      }
      return client;
    },
  });
}
