import type { Bus, BusHeaders, BusMessage, DurableMessage } from "./bus.js";
import { deadLetterHeaders } from "./dead-letters.js";
import { deadLetterSubject } from "./durable-settings.js";

/**
 * Keeps several deployments (or parallel test runs) apart on one NATS server: every subject, durable
 * consumer and KV bucket gets the namespace, and handlers see the subjects without it. Durable subjects
 * stay under `events.` (`events.<ns>.…`) so the shared events stream still holds them.
 */
export function withNamespace(bus: Bus, namespace: string): Bus {
  if (!/^[A-Za-z0-9_-]+$/.test(namespace)) throw new Error(`invalid bus namespace "${namespace}"`);
  // One mapping for every subject, so a plain subscriber of an `events.` subject sees its durable events.
  const scoped = (s: string) =>
    s.startsWith("events.") ? `events.${namespace}.${s.slice(7)}` : `${namespace}.${s}`;
  // A durable subject outside `events.` is passed on unchanged, for the bus to reject as it always does.
  const durable = (s: string) => (s.startsWith("events.") ? scoped(s) : s);
  const core = scoped;
  const unprefix = (s: string) =>
    s.startsWith(`events.${namespace}.`)
      ? `events.${s.slice(8 + namespace.length)}`
      : s.startsWith(`${namespace}.`)
        ? s.slice(namespace.length + 1)
        : s;
  const plain = <M extends BusMessage>(msg: M): M => ({ ...msg, subject: unprefix(msg.subject) });
  // A dead letter names its subject and consumer as the underlying bus saw them.
  const ownNames = (headers: BusHeaders): BusHeaders => {
    const out = { ...headers };
    const subject = out[deadLetterHeaders.subject];
    if (subject) out[deadLetterHeaders.subject] = unprefix(subject);
    const consumer = out[deadLetterHeaders.consumer];
    if (consumer?.startsWith(`${namespace}_`)) {
      out[deadLetterHeaders.consumer] = consumer.slice(namespace.length + 1);
    }
    return out;
  };

  return {
    kind: bus.kind,
    status: () => bus.status(),
    maxPayload: () => bus.maxPayload(),
    unsentBytes: () => bus.unsentBytes(),
    publish: (subject, data, headers) => bus.publish(core(subject), data, headers),
    flush: () => bus.flush(),
    subscribe: (subject, handler, options) => bus.subscribe(core(subject), (m) => handler(plain(m)), options),
    request: (subject, data, options) => bus.request(core(subject), data, options),
    serve: (subject, handler, options) => bus.serve(core(subject), (m) => handler(plain(m)), options),
    publishDurable: (subject, data, options) => bus.publishDurable(durable(subject), data, options),
    consumeDurable: (subject, consumer, handler, options) =>
      bus.consumeDurable(
        durable(subject),
        `${namespace}_${consumer}`,
        (m: DurableMessage) => handler(plain(m)),
        // Dead letters stay in the namespace, under the consumer's own name.
        { ...options, deadLetterSubject: durable(options?.deadLetterSubject ?? deadLetterSubject(consumer)) },
      ),
    readDurable: async (filter, options) =>
      (await bus.readDurable(durable(filter), options)).map((m) =>
        plain({ ...m, headers: ownNames(m.headers) }),
      ),
    deleteDurable: (seq) => bus.deleteDurable(seq),
    kv: (bucket, options) => bus.kv(`${namespace}_${bucket}`, options),
    close: () => bus.close(),
  };
}
