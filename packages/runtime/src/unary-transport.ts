import http from "node:http";
import { create, isMessage } from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createMethodUrl, getAbortSignalReason } from "@connectrpc/connect/protocol";
import {
  errorFromJsonBytes,
  requestHeader,
  trailerDemux,
  validateResponse,
} from "@connectrpc/connect/protocol-connect";
import { binarySerialization } from "./binary-serialization.js";
import { armDeadline, NEVER_ABORTED } from "./call-deadline.js";
import { nodeHeaders, postWhole, webHeaders } from "./http1-unary-client.js";

export interface UnaryTransportOptions {
  baseUrl: string;
  interceptors: Interceptor[];
  /** The deadline of a call that names none (connect's `defaultTimeoutMs`). */
  defaultTimeoutMs?: number;
  agent?: http.Agent;
}

/**
 * The services' Connect transport: unary calls with binary messages, uncompressed, the client's half of
 * http1-unary-server.ts. It makes the request connect's Connect transport makes (connect's own header,
 * URL, serialization, response validation and error parsing), runs the same interceptors, and sends it
 * with http1-unary-client's `postWhole`: one request with a known length in one write, the answer read
 * whole. What connect's runUnaryCall adds per call and this does not: two linked abort controllers
 * aborted when the call ends (a DOMException each), the body passed through async iterators both ways.
 * A deadline or the caller's signal still ends a call as connect's would (DeadlineExceeded, Canceled).
 * The services' contracts have no stream calls; one is refused as Unimplemented.
 */
export function unaryTransport(options: UnaryTransportOptions): Transport {
  const agent = options.agent ?? http.globalAgent;
  return {
    async unary(method, callerSignal, timeoutMs, header, input, contextValues) {
      const timeout =
        timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const serialization = binarySerialization(method);
      const call = new CallSignal(callerSignal, timeout);
      const send = async (req: UnaryRequest): Promise<UnaryResponse> => {
        const answer = await postWhole(
          req.url,
          req.requestMethod,
          nodeHeaders(req.header),
          Buffer.from(serialization.input.serialize(req.message)),
          req.signal,
          agent,
        );
        const headers = webHeaders(answer.headers);
        const { isUnaryError, unaryError } = validateResponse("unary", true, answer.status, headers);
        const [header, trailer] = trailerDemux(headers);
        if (isUnaryError) throw errorFromJsonBytes(answer.body, appendHeaders(header, trailer), unaryError);
        const message = serialization.output.parse(answer.body);
        return { stream: false, service: method.parent, method, header, message, trailer };
      };
      const next = options.interceptors.reduceRight<(req: UnaryRequest) => Promise<UnaryResponse>>(
        (inner, interceptor) => interceptor(inner as never) as never,
        send,
      );
      try {
        return (await next({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(options.baseUrl, method),
          header: requestHeader("unary", true, timeout, header, true),
          contextValues: contextValues ?? createContextValues(),
          message: isMessage(input, method.input) ? input : create(method.input, input as never),
          signal: call.signal,
        })) as never;
      } catch (err) {
        // As runUnaryCall: a call whose signal fired fails with the signal's reason.
        throw call.signal.aborted
          ? ConnectError.from(getAbortSignalReason(call.signal), Code.Canceled)
          : ConnectError.from(err);
      } finally {
        call.done();
      }
    },
    stream: (method) =>
      Promise.reject(
        new ConnectError(
          `${method.parent.typeName}.${method.name}: no stream calls between services`,
          Code.Unimplemented,
        ),
      ),
  };
}

/**
 * A call's signal: fires at its deadline (DeadlineExceeded) or when the caller's signal fires (with its
 * reason). A call without either shares one signal that never fires.
 */
class CallSignal {
  readonly signal: AbortSignal;
  private readonly controller: AbortController | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly caller: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    if (!caller && timeoutMs === undefined) {
      this.signal = NEVER_ABORTED;
      return;
    }
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    if (caller?.aborted) this.onCallerAbort();
    else caller?.addEventListener("abort", this.onCallerAbort);
    this.timer = armDeadline(this.controller, timeoutMs);
  }

  private readonly onCallerAbort = () => {
    if (this.caller && !this.signal.aborted) this.controller?.abort(getAbortSignalReason(this.caller));
  };

  done(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCallerAbort);
  }
}
