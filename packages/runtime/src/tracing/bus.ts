import type { Bus, BusHeaders, BusMessage } from "@avatar/bus";
import { SpanKind } from "@opentelemetry/api";
import { subjectLabel } from "../metrics/subjects.js";
import { tracingOn } from "./setup.js";
import { extractContext, injectContext, inSpan, inSpanSync, SERVICE_ATTRIBUTE } from "./spans.js";

/**
 * Subjects left out of tracing: the realtime relay (`rt.<session>.in/out`, every audio chunk of every
 * session) and the workers' heartbeats would swamp traces without explaining anything.
 */
const untraced = (subject: string) => subject.startsWith("rt.");

/**
 * The bus of one service, traced: publishes and requests carry `traceparent` in their NATS headers (a
 * producer or client span around them), handlers run in a consumer or server span that continues it.
 */
export function traceBus(bus: Bus, service: string): Bus {
  const attributes = (subject: string) => ({
    "messaging.system": bus.kind === "nats" ? "nats" : "in_process",
    "messaging.destination.name": subjectLabel(subject),
    [SERVICE_ATTRIBUTE]: service,
  });
  const withContext = (headers: BusHeaders | undefined): BusHeaders => injectContext({ ...headers });
  const continued =
    <M extends BusMessage, R>(kind: SpanKind, handler: (msg: M) => R | Promise<R>) =>
    (msg: M): R | Promise<R> => {
      if (!tracingOn() || untraced(msg.subject)) return handler(msg);
      return inSpan(
        `${subjectLabel(msg.subject)} process`,
        { kind, parent: extractContext(msg.headers), attributes: attributes(msg.subject) },
        async () => handler(msg),
      );
    };
  const sending = <T>(
    subject: string,
    kind: SpanKind,
    send: (traced: BusHeaders | undefined) => Promise<T>,
  ): Promise<T> => {
    if (!tracingOn() || untraced(subject)) return send(undefined);
    return inSpan(`${subjectLabel(subject)} publish`, { kind, attributes: attributes(subject) }, () =>
      send(withContext(undefined)),
    );
  };

  return {
    kind: bus.kind,
    status: () => bus.status(),
    maxPayload: () => bus.maxPayload(),
    unsentBytes: () => bus.unsentBytes(),
    readDurable: (filter, options) => bus.readDurable(filter, options),
    deleteDurable: (seq) => bus.deleteDurable(seq),
    flush: () => bus.flush(),
    publish(subject, data, headers) {
      if (!tracingOn() || untraced(subject)) return bus.publish(subject, data, headers);
      inSpanSync(
        `${subjectLabel(subject)} publish`,
        { kind: SpanKind.PRODUCER, attributes: attributes(subject) },
        () => bus.publish(subject, data, withContext(headers)),
      );
    },
    subscribe: (subject, handler, options) =>
      bus.subscribe(subject, continued(SpanKind.CONSUMER, handler), options),
    request: (subject, data, options) =>
      sending(subject, SpanKind.CLIENT, (traced) =>
        bus.request(
          subject,
          data,
          traced ? { ...options, headers: { ...options.headers, ...traced } } : options,
        ),
      ),
    serve: (subject, handler, options) => bus.serve(subject, continued(SpanKind.SERVER, handler), options),
    publishDurable: (subject, data, options = {}) =>
      sending(subject, SpanKind.PRODUCER, (traced) =>
        bus.publishDurable(
          subject,
          data,
          traced ? { ...options, headers: { ...options.headers, ...traced } } : options,
        ),
      ),
    consumeDurable: (subject, consumer, handler, options) =>
      bus.consumeDurable(subject, consumer, continued(SpanKind.CONSUMER, handler), options),
    kv: (bucket, options) => bus.kv(bucket, options),
    close: () => bus.close(),
  };
}
