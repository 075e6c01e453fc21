import { type Bus, type BusHeaders, type DurableMessage, isPromise } from "@avatar/bus";
import { busConsumed, busConsumeLag, busPublished } from "./catalog.js";
import { subjectLabel } from "./subjects.js";

/** Header carrying a durable event's publication time (epoch ms), for the consume-lag histogram. */
export const PUBLISHED_AT_HEADER = "avatar-published-at";

/**
 * The bus of one service, counted: publishes by kind and subject, handled messages by outcome, and how
 * long durable events waited. Behaviour is unchanged (handlers' results and errors pass through).
 */
export function meterBus(bus: Bus, service: string, now: () => number = Date.now): Bus {
  const published = (kind: string, subject: string) => {
    busPublished.tallyOf(service, kind, subjectLabel(subject)).n++;
  };
  // A handler that finishes synchronously is counted without a promise (most realtime frames' do).
  const counted =
    <M extends { subject: string }, R>(kind: string, handler: (msg: M) => R | Promise<R>) =>
    (msg: M): R | Promise<R> => {
      const subject = subjectLabel(msg.subject);
      const outcome = (name: "ok" | "error") => busConsumed.tallyOf(service, kind, subject, name).n++;
      let result: R | Promise<R>;
      try {
        result = handler(msg);
      } catch (err) {
        outcome("error");
        throw err;
      }
      if (!isPromise(result)) {
        outcome("ok");
        return result;
      }
      return result.then(
        (value) => {
          outcome("ok");
          return value;
        },
        (err: unknown) => {
          outcome("error");
          throw err;
        },
      );
    };
  const stamped = (headers: BusHeaders | undefined): BusHeaders => ({
    [PUBLISHED_AT_HEADER]: String(now()),
    ...headers,
  });

  return {
    kind: bus.kind,
    status: () => bus.status(),
    maxPayload: () => bus.maxPayload(),
    unsentBytes: () => bus.unsentBytes(),
    readDurable: (filter, options) => bus.readDurable(filter, options),
    deleteDurable: (seq) => bus.deleteDurable(seq),
    flush: () => bus.flush(),
    publish(subject, data, headers) {
      bus.publish(subject, data, headers);
      published("core", subject);
    },
    subscribe: (subject, handler, options) => bus.subscribe(subject, counted("core", handler), options),
    async request(subject, data, options) {
      published("request", subject);
      return bus.request(subject, data, options);
    },
    serve: (subject, handler, options) => bus.serve(subject, counted("serve", handler), options),
    async publishDurable(subject, data, options = {}) {
      await bus.publishDurable(subject, data, { ...options, headers: stamped(options.headers) });
      published("durable", subject);
    },
    consumeDurable(subject, consumer, handler, options) {
      const inner = counted("durable", handler);
      return bus.consumeDurable(
        subject,
        consumer,
        (msg: DurableMessage) => {
          const at = Number(msg.headers[PUBLISHED_AT_HEADER]);
          if (Number.isFinite(at) && at > 0) {
            busConsumeLag.observe(
              { service, subject: subjectLabel(msg.subject) },
              Math.max(0, now() - at) / 1000,
            );
          }
          return inner(msg);
        },
        options,
      );
    },
    kv: (bucket, options) => bus.kv(bucket, options),
    close: () => bus.close(),
  };
}
