/** Core NATS messaging (at-most-once): publish, subscribe, request/reply, with handler tracking. */
import type { Msg, NatsConnection } from "@nats-io/transport-node";
import {
  type BusHeaders,
  type BusMessage,
  type MessageHandler,
  NoRespondersError,
  type ReplyHandler,
  RequestTimeoutError,
  type SubscribeOptions,
  type Subscription,
} from "../bus.js";
import { andThen, InFlight } from "../in-flight.js";
import { type BusLogger, errorText } from "../logger.js";
import { assertPublishSubject, assertSubscribeSubject } from "../subject.js";
import { closedToBusError, isNoResponders, isTimeout } from "./errors.js";
import { fromNatsHeaders, toNatsHeaders } from "./headers.js";

function toBusMessage(msg: Msg): BusMessage {
  return { subject: msg.subject, data: msg.data, headers: fromNatsHeaders(msg.headers) };
}

export class NatsCore {
  readonly #stops = new Set<() => Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly logger: BusLogger,
  ) {}

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    assertPublishSubject(subject);
    try {
      this.nc.publish(subject, data, { headers: toNatsHeaders(headers) });
    } catch (err) {
      throw closedToBusError(err);
    }
  }

  async request(
    subject: string,
    data: Uint8Array,
    timeoutMs: number,
    headers?: BusHeaders,
  ): Promise<Uint8Array> {
    assertPublishSubject(subject);
    try {
      const reply = await this.nc.request(subject, data, {
        timeout: timeoutMs,
        headers: toNatsHeaders(headers),
      });
      return reply.data;
    } catch (err) {
      if (isNoResponders(err)) throw new NoRespondersError(subject);
      if (isTimeout(err)) throw new RequestTimeoutError(subject, timeoutMs);
      throw closedToBusError(err);
    }
  }

  subscribe(subject: string, handler: MessageHandler, options: SubscribeOptions = {}): Subscription {
    return this.#add(subject, options.queue, "message handler failed", (msg) => handler(toBusMessage(msg)));
  }

  serve(subject: string, handler: ReplyHandler, options: SubscribeOptions = {}): Subscription {
    return this.#add(subject, options.queue, "reply handler failed", (msg) =>
      andThen(handler(toBusMessage(msg)), (reply) => {
        if (msg.reply) msg.respond(reply);
      }),
    );
  }

  /** Stops every subscription and waits for their handlers. */
  async close(): Promise<void> {
    await Promise.all([...this.#stops].map((stop) => stop()));
  }

  #add(
    subject: string,
    queue: string | undefined,
    failure: string,
    invoke: (msg: Msg) => void | Promise<void>,
  ): Subscription {
    assertSubscribeSubject(subject);
    const inFlight = new InFlight();
    let active = true;
    const sub = this.nc.subscribe(subject, {
      queue,
      callback: (err, msg) => {
        if (err) {
          this.logger("error", "subscription failed", { subject, error: errorText(err) });
          return;
        }
        if (!active) return;
        inFlight.call(
          () => invoke(msg),
          (handlerErr: unknown) =>
            this.logger("warn", failure, { subject: msg.subject, error: errorText(handlerErr) }),
        );
      },
    });
    const stop = async () => {
      if (active) {
        active = false;
        this.#stops.delete(stop);
        if (!sub.isClosed()) sub.unsubscribe();
      }
      await inFlight.idle();
    };
    this.#stops.add(stop);
    return { unsubscribe: stop };
  }
}
