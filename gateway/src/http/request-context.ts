import type { IncomingMessage } from "node:http";
import type { Bus } from "@avatar/bus";
import { type Clients, clientsOnBehalfOf, type Logger } from "@avatar/runtime";
import type { ParsedRequest } from "./parse-request.js";
import type { Principal, RequestContext } from "./route.js";

/** What the contexts of all the gateway's requests share. */
export interface SharedContext {
  clients: Clients;
  bus: Bus;
  log: Logger;
  baseUrl(req: IncomingMessage): string;
  https(req: IncomingMessage): boolean;
  apiKeyRevoked(apiKeyId: string): Promise<boolean>;
}

/**
 * A route's view of its request. A class rather than an object literal with getters and closures: one is
 * made for every request, and what few routes read (the clients on behalf of the request, the public
 * base URL, the scheme) is worked out on its first read.
 */
export class GatewayRequestContext implements RequestContext<unknown, unknown, unknown> {
  readonly params: unknown;
  readonly query: unknown;
  readonly body: unknown;
  /** The cookies a route set, for the response. */
  cookies: string[] | undefined;
  #clients: Clients | undefined;

  constructor(
    private readonly shared: SharedContext,
    private readonly req: IncomingMessage,
    readonly principal: Principal,
    parsed: ParsedRequest,
    readonly url: URL,
    readonly requestId: string,
  ) {
    this.params = parsed.params;
    this.query = parsed.query;
    this.body = parsed.body;
  }

  get clients(): Clients {
    this.#clients ??= clientsOnBehalfOf(this.shared.clients, this.requestId);
    return this.#clients;
  }

  get processClients(): Clients {
    return this.shared.clients;
  }

  get bus(): Bus {
    return this.shared.bus;
  }

  get log(): Logger {
    return this.shared.log;
  }

  get baseUrl(): string {
    return this.shared.baseUrl(this.req);
  }

  get https(): boolean {
    return this.shared.https(this.req);
  }

  get origin(): string | undefined {
    const origin = this.req.headers.origin;
    return typeof origin === "string" ? origin : undefined;
  }

  get sameOrigin(): boolean {
    return this.req.headers["sec-fetch-site"] === "same-origin";
  }

  setCookie(cookie: string): void {
    this.cookies ??= [];
    this.cookies.push(cookie);
  }

  apiKeyRevoked(apiKeyId: string): Promise<boolean> {
    return this.shared.apiKeyRevoked(apiKeyId);
  }
}
