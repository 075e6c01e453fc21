import http from "node:http";
import { create, type DescMessage, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
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
import { NEVER_ABORTED, nodeHeaders, postWhole, webHeaders } from "./http1-unary-client.js";

export interface UnaryTransportOptions {
  baseUrl: string;
  interceptors: Interceptor[];
  /** The deadline of a call that names none (connect's `defaultTimeoutMs`). */
  defaultTimeoutMs?: number;
  agent?: http.Agent;
  /** Serves stream calls, which this transport does not make. */
  streams: Transport;
}

/**
 * The services' Connect transport for unary calls with binary messages, uncompressed: the client's half
 * of http1-unary-server.ts. It makes the request connect's Connect transport makes (connect's own header,
 * URL, response validation and error parsing), runs the same interceptors, and sends it with
 * http1-unary-client's `postWhole`. What connect's runUnaryCall adds per call and this does not: two
 * linked abort controllers aborted when the call ends (a DOMException each), the body passed through
 * async iterators both ways. A deadline or the caller's signal still ends a call as connect's would
 * (DeadlineExceeded, Canceled). Stream calls go to `streams`.
 */
export function unaryTransport(options: UnaryTransportOptions): Transport {
  const agent = options.agent ?? http.globalAgent;
  return {
    async unary(method, callerSignal, timeoutMs, header, input, contextValues) {
      const timeout =
        timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const call = new CallSignal(callerSignal, timeout);
      const send = async (req: UnaryRequest): Promise<UnaryResponse> => {
        const answer = await postWhole(
          req.url,
          req.requestMethod,
          nodeHeaders(req.header),
          Buffer.from(toBinary(method.input, req.message as never)),
          req.signal,
          agent,
        );
        const headers = webHeaders(answer.headers);
        const { isUnaryError, unaryError } = validateResponse("unary", true, answer.status, headers);
        const [header, trailer] = trailerDemux(headers);
        if (isUnaryError) throw errorFromJsonBytes(answer.body, appendHeaders(header, trailer), unaryError);
        return {
          stream: false,
          service: method.parent,
          method,
          header,
          message: parse(method.output, answer.body),
          trailer,
        };
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
    stream: (...args) => options.streams.stream(...args),
  };
}

/** As connect's binary serialization words a failure to parse. */
function parse(schema: DescMessage, bytes: Uint8Array) {
  try {
    return fromBinary(schema, bytes);
  } catch (e) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}

/** setTimeout's limit: a longer deadline is as good as none for a call (it would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS)
      this.timer = setTimeout(
        () => this.controller?.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
        timeoutMs,
      );
  }

  private readonly onCallerAbort = () => {
    if (this.caller && !this.signal.aborted) this.controller?.abort(getAbortSignalReason(this.caller));
  };

  done(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCallerAbort);
  }
}
