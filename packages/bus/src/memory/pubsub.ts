/**
 * In-process core messaging with NATS semantics: wildcard fan-out, queue groups (one member per message,
 * round-robin), request/reply with first-reply-wins. Handlers always run on a later tick than publish.
 */
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
import { assertPublishSubject, assertSubscribeSubject, SubjectIndex } from "../subject.js";

type Reply = (data: Uint8Array) => void;

interface CoreSub {
  readonly pattern: string;
  readonly queue: string | undefined;
  active: boolean;
  readonly inFlight: InFlight;
  receive(msg: BusMessage, reply: Reply | undefined): void;
}

function copyMessage(msg: BusMessage): BusMessage {
  return { subject: msg.subject, data: msg.data.slice(), headers: { ...msg.headers } };
}

export class MemoryPubSub {
  readonly #subs = new Set<CoreSub>();
  readonly #bySubject = new SubjectIndex<CoreSub>();
  readonly #queueTurn = new Map<string, number>();
  readonly #logger: BusLogger;

  constructor(logger: BusLogger) {
    this.#logger = logger;
  }

  publish(subject: string, data: Uint8Array, headers: BusHeaders = {}): void {
    assertPublishSubject(subject);
    this.#route({ subject, data: data.slice(), headers: { ...headers } }, undefined);
  }

  request(
    subject: string,
    data: Uint8Array,
    timeoutMs: number,
    headers: BusHeaders = {},
  ): Promise<Uint8Array> {
    assertPublishSubject(subject);
    return new Promise((resolve, reject) => {
      let answered = false;
      const timer = setTimeout(() => {
        answered = true;
        reject(new RequestTimeoutError(subject, timeoutMs));
      }, timeoutMs);
      const reply: Reply = (payload) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        resolve(payload.slice());
      };
      const recipients = this.#route({ subject, data: data.slice(), headers: { ...headers } }, reply);
      if (recipients === 0) {
        answered = true;
        clearTimeout(timer);
        reject(new NoRespondersError(subject));
      }
    });
  }

  subscribe(subject: string, handler: MessageHandler, options: SubscribeOptions = {}): Subscription {
    return this.#add(subject, options.queue, "message handler failed", (msg) => handler(msg));
  }

  serve(subject: string, handler: ReplyHandler, options: SubscribeOptions = {}): Subscription {
    return this.#add(subject, options.queue, "reply handler failed", (msg, reply) =>
      andThen(handler(msg), (payload) => reply?.(payload)),
    );
  }

  /** Stops every subscription and waits for their handlers. */
  async close(): Promise<void> {
    await Promise.all([...this.#subs].map((sub) => this.#remove(sub)));
  }

  #add(
    pattern: string,
    queue: string | undefined,
    failure: string,
    invoke: (msg: BusMessage, reply: Reply | undefined) => void | Promise<void>,
  ): Subscription {
    assertSubscribeSubject(pattern);
    const inFlight = new InFlight();
    const sub: CoreSub = {
      pattern,
      queue,
      active: true,
      inFlight,
      receive: (msg, reply) =>
        inFlight.call(
          () => invoke(msg, reply),
          (err) => this.#logger("warn", failure, { subject: msg.subject, error: errorText(err) }),
        ),
    };
    this.#subs.add(sub);
    this.#bySubject.add(pattern, sub);
    return { unsubscribe: () => this.#remove(sub) };
  }

  async #remove(sub: CoreSub): Promise<void> {
    sub.active = false;
    this.#subs.delete(sub);
    this.#bySubject.delete(sub.pattern, sub);
    await sub.inFlight.idle();
  }

  /** Hands the message to its recipients on a later tick; returns how many there are. */
  #route(msg: BusMessage, reply: Reply | undefined): number {
    const recipients = this.#recipients(msg.subject);
    for (const sub of recipients) {
      setImmediate(() => {
        if (sub.active) sub.receive(copyMessage(msg), reply);
      });
    }
    return recipients.length;
  }

  #recipients(subject: string): CoreSub[] {
    const plain: CoreSub[] = [];
    const groups = new Map<string, CoreSub[]>();
    for (const sub of this.#bySubject.match(subject)) {
      if (!sub.active) continue;
      if (sub.queue === undefined) {
        plain.push(sub);
      } else {
        const members = groups.get(sub.queue) ?? [];
        members.push(sub);
        groups.set(sub.queue, members);
      }
    }
    for (const [queue, members] of groups) {
      const turn = this.#queueTurn.get(queue) ?? 0;
      this.#queueTurn.set(queue, turn + 1);
      const chosen = members[turn % members.length];
      if (chosen) plain.push(chosen);
    }
    return plain;
  }
}
