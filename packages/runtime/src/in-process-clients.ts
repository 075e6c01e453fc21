import type { DescService, MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  type CallOptions,
  Code,
  ConnectError,
  type ConnectRouter,
  type ServiceImpl,
} from "@connectrpc/connect";
import { SpanKind } from "@opentelemetry/api";
import { type Clients, type ServiceName, services } from "./clients.js";
import { InProcessHandlerContext } from "./in-process-context.js";
import type { Logger } from "./log.js";
import { meterCalled, meterServed } from "./metrics/connect.js";
import { requestIdOf, serveWithRequestId } from "./request-id.js";
import type { ServiceApp } from "./server.js";
import { callersOf } from "./service-callers.js";
import { serviceError } from "./service-errors.js";
import type { CallerName } from "./service-identity.js";
import { tracingOn } from "./tracing/setup.js";
import { inSpan, SERVICE_ATTRIBUTE } from "./tracing/spans.js";

type AnyImpl = Partial<ServiceImpl<DescService>>;

/**
 * The services that run in this process (the one-process suite), called as functions instead of over
 * loopback HTTP: no sockets, no encoding, no HTTP parsing per call. Each call builds its request message
 * and a handler context (in-process-context.ts) as a Connect server would, and answers the response
 * message a client would get. Errors are what the services' server interceptors make of them
 * (service-errors.ts). The caller's request id (its call options, onBehalfOf) reaches the handler's context
 * values as over HTTP, and each call is a span of the called service in the caller's trace, and counted
 * on both sides, as a call over HTTP would be.
 * Each client is made for one caller, and a call from a caller not on the RPC's allow-list
 * (service-callers.ts) is refused as over HTTP: no credential travels (nothing leaves the process), but
 * no service reaches an RPC it may not call.
 */
export class InProcessServices {
  private readonly impls = new Map<string, AnyImpl>();
  /** The service (process) name serving each proto service. */
  private readonly names = new Map<string, string>();

  constructor(private readonly log: Logger) {}

  /** Records the implementations a service's routes() registers. */
  register(app: ServiceApp): void {
    const recorder = {
      service: (desc: DescService, impl: AnyImpl) => {
        this.impls.set(desc.typeName, impl);
        this.names.set(desc.typeName, app.name);
        return recorder;
      },
      rpc: () => {
        throw new Error(`${app.name}: single rpc() routes cannot be called in process`);
      },
    };
    app.routes(recorder as unknown as ConnectRouter);
  }

  /**
   * The clients `caller` calls with: one per service; a service not registered (yet) answers
   * Unavailable, as a stopped peer would.
   */
  clients(caller: CallerName): Clients {
    const made = {} as Record<ServiceName, unknown>;
    for (const name of Object.keys(services) as ServiceName[])
      made[name] = this.client(services[name], caller);
    return made as Clients;
  }

  private client(service: DescService, caller: CallerName): unknown {
    const client: Record<string, unknown> = {};
    for (const method of service.methods) {
      if (method.methodKind !== "unary") continue;
      const label = `/${service.typeName}/${method.name}`;
      const procedure = `${service.typeName}/${method.name}`;
      const allowed = callersOf(service.typeName, method.name).includes(caller);
      const call = async (request: MessageInitShape<typeof method.input>, options?: CallOptions) => {
        if (!allowed) {
          // As presentIdentity reports a refused identity: the deployment's fault, an internal error.
          throw new ConnectError(`${caller} may not call ${procedure}`, Code.Internal);
        }
        const impl = this.impls.get(service.typeName);
        const fn = impl?.[method.localName as never] as ((req: unknown, ctx: unknown) => unknown) | undefined;
        if (typeof fn !== "function") {
          throw new ConnectError(`${label} is not served in this process`, Code.Unavailable);
        }
        const context = new InProcessHandlerContext(service, method, label);
        // As serveRequestId does over HTTP: the caller's request id, or a fresh one.
        const callerId = options?.contextValues && requestIdOf(options.contextValues);
        const requestId = serveWithRequestId(context.values, callerId);
        try {
          return create(
            method.output,
            (await fn.call(impl, create(method.input, request), context)) as never,
          );
        } catch (err) {
          throw serviceError(err, this.log, label, requestId);
        }
      };
      const served = () => this.names.get(service.typeName) ?? service.typeName;
      client[method.localName] = (
        request: MessageInitShape<typeof method.input> = {},
        options?: CallOptions,
      ) => {
        const metered = () =>
          meterCalled(procedure, () => meterServed(served(), procedure, () => call(request, options)));
        // Without tracing no span is made: the call is counted and timed only.
        if (!tracingOn()) return metered();
        return inSpan(
          procedure,
          {
            kind: SpanKind.SERVER,
            attributes: {
              "rpc.system": "in_process",
              "rpc.method": procedure,
              [SERVICE_ATTRIBUTE]: served(),
            },
          },
          metered,
        );
      };
    }
    return client;
  }
}
