import type http from "node:http";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImpl,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  parseTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { type ConnectNodeAdapterOptions, connectNodeAdapter } from "@connectrpc/connect-node";
import { binarySerialization } from "./binary-serialization.js";
import { armDeadline } from "./call-deadline.js";

type UnarySpec = MethodImplSpec & { kind: "unary" };

/** The routes, the interceptors of every call, and what answers a path that is no RPC. */
export type UnaryServerOptions = Pick<ConnectNodeAdapterOptions, "routes" | "fallback"> & {
  interceptors: Interceptor[];
};

/** connect's default: any deadline a caller asks for (connect-timeout-ms allows ten digits). */
const MAX_TIMEOUT_MS = Number.MAX_SAFE_INTEGER;

/**
 * The services' Connect server: the server's half of http1-unary-client.ts. A unary call whose request is
 * binary protobuf, uncompressed, and whose caller accepts no compressed answer (every call the services
 * make of each other) is served here: the body read whole, the handler context made as connect's is,
 * the implementation called through the same interceptors (connect's invokeUnaryImplementation), and the
 * answer written with its length in one `end()`. Everything else (JSON, compression, GET, streams, an
 * unknown path) goes to connect-node's adapter, which serves it as before.
 * connect-node's path makes each call's body an async iterator, links three abort signals, aborts them
 * all when the call is done (a DOMException per call), parses the URL twice and writes the answer
 * through a promise per chunk: about a third of the tokens and sessions services' CPU under the mint
 * load as separate processes (2026-11-28). Its answers are the same, byte for byte, for the same call
 * (http1-unary-server.test.ts sends each case to both).
 */
export function http1UnaryServer(options: UnaryServerOptions): http.RequestListener {
  const general = connectNodeAdapter(options);
  const unary = unaryMethods(options.routes);
  const interceptors = options.interceptors;
  return (req, res) => {
    const spec = req.method === "POST" ? unary.get(pathOf(req.url)) : undefined;
    if (!spec || !servedPlainly(req.headers)) return general(req, res);
    serveUnary(spec, interceptors, req, res);
  };
}

function pathOf(url: string | undefined): string {
  if (!url) return "";
  const query = url.indexOf("?");
  return query < 0 ? url : url.slice(0, query);
}

/** Binary, uncompressed either way: what connect would answer with a plain binary message. */
function servedPlainly(headers: http.IncomingHttpHeaders): boolean {
  if (headers["content-type"] !== contentTypeUnaryProto) return false;
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding !== "identity") return false;
  const accepted = headers["accept-encoding"];
  return accepted === undefined || accepted === "" || accepted === "identity";
}

/** The unary methods the routes register, by request path. */
function unaryMethods(routes: (router: ConnectRouter) => void): Map<string, UnarySpec> {
  const found = new Map<string, UnarySpec>();
  const recorder = {
    handlers: [],
    service(service: DescService, impl: Partial<ServiceImpl<DescService>>, handlerOptions?: object) {
      // A service with options of its own (interceptors, limits) is left to connect-node entirely.
      if (handlerOptions !== undefined) return recorder;
      const spec = createServiceImplSpec(service, impl);
      for (const method of service.methods) {
        const methodSpec = spec.methods[method.localName];
        if (methodSpec?.kind === "unary") found.set(`/${service.typeName}/${method.name}`, methodSpec);
      }
      return recorder;
    },
    rpc() {
      return recorder;
    },
  };
  routes(recorder as unknown as ConnectRouter);
  return found;
}

function serveUnary(
  spec: UnarySpec,
  interceptors: Interceptor[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.once("end", () => {
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    // What could still throw here is writing the answer (a header value Node refuses): the call's
    // connection goes, as connect-node's adapter would leave it, and the process stays up.
    answer(spec, interceptors, req, res, body).catch(() => res.destroy());
  });
}

async function answer(
  spec: UnarySpec,
  interceptors: Interceptor[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
): Promise<void> {
  const timeout = parseTimeout(headerValue(req.headers["connect-timeout-ms"]), MAX_TIMEOUT_MS);
  const context = new CallContext(spec.method, req, res, timeout.timeoutMs);
  let status = 200;
  let payload: Uint8Array;
  try {
    if (timeout.error) throw timeout.error;
    const serialization = binarySerialization(spec.method);
    const input = serialization.input.parse(body);
    const output = await invokeUnaryImplementation(spec, context, input, interceptors);
    payload = serialization.output.serialize(output);
  } catch (e) {
    const error =
      e instanceof ConnectError
        ? e
        : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
    status = codeToHttpStatus(error.code);
    context.responseHeader.set("content-type", contentTypeUnaryJson);
    for (const [key, value] of error.metadata) context.responseHeader.set(key, value);
    payload = errorToJsonBytes(error, undefined);
  } finally {
    context.done();
  }
  if (res.destroyed) return;
  const headers: Record<string, string> = {};
  trailerMux(context.responseHeader, context.responseTrailer).forEach((value, key) => {
    headers[key] = value;
  });
  headers["content-length"] = String(payload.byteLength);
  res.writeHead(status, headers);
  res.end(payload);
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * A call's HandlerContext, as connect's createHandlerContext makes it: the request's headers, the
 * answer's headers and trailers, and a signal that fires at the deadline or when the caller goes away
 * before the answer. Unlike connect's, nothing is aborted when the call simply ends.
 */
class CallContext implements HandlerContext {
  readonly protocolName = "connect";
  readonly requestMethod = "POST";
  readonly service: DescService;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly responseHeader = new Headers({ "content-type": contentTypeUnaryProto });
  readonly responseTrailer = new Headers();
  readonly signal: AbortSignal;
  readonly timeoutMs: () => number | undefined;
  #values: ContextValues | undefined;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onClose: () => void;

  constructor(
    readonly method: DescMethod,
    req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    timeoutMs: number | undefined,
  ) {
    this.service = method.parent;
    this.url = `http://${req.headers.host ?? "localhost"}${req.url ?? ""}`;
    this.requestHeader = webHeaders(req.rawHeaders);
    this.signal = this.controller.signal;
    if (timeoutMs === undefined) {
      this.timeoutMs = () => undefined;
    } else {
      const deadline = Date.now() + timeoutMs;
      this.timeoutMs = () => deadline - Date.now();
      this.timer = armDeadline(this.controller, timeoutMs);
    }
    this.onClose = () => {
      if (!res.writableFinished) this.abort(new ConnectError("the caller went away", Code.Canceled));
    };
    res.once("close", this.onClose);
  }

  get values(): ContextValues {
    this.#values ??= createContextValues();
    return this.#values;
  }

  abort(reason?: unknown): void {
    if (!this.signal.aborted) this.controller.abort(reason);
  }

  /** The call has its answer: the deadline and the caller's going away no longer concern it. */
  done(): void {
    clearTimeout(this.timer);
    this.res.off("close", this.onClose);
  }
}

function webHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}
