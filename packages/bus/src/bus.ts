/**
 * The message bus every service talks through: one interface, two implementations
 * (NATS with JetStream, and in-process). Payloads are bytes; typed helpers live in @avatar/runtime.
 *
 * Subjects follow NATS rules: dot-separated tokens, `*` matches one token, `>` matches the rest.
 */

export type BusHeaders = Record<string, string>;

export interface BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: BusHeaders;
}

export type MessageHandler = (msg: BusMessage) => void | Promise<void>;

/** A reply handler returns the reply payload; throwing sends nothing back (the requester times out). */
export type ReplyHandler = (msg: BusMessage) => Uint8Array | Promise<Uint8Array>;

export interface Subscription {
  /** Stops delivery; resolves once in-flight handlers of this subscription have finished. */
  unsubscribe(): Promise<void>;
}

export interface SubscribeOptions {
  /** Members of one queue group share the messages: each message goes to one member. */
  queue?: string;
}

export interface RequestOptions {
  timeoutMs: number;
  headers?: BusHeaders;
}

export interface DurablePublishOptions {
  /** Messages with the same id published within the dedupe window are stored once. */
  msgId?: string;
  headers?: BusHeaders;
}

export interface DurableConsumerOptions {
  /** How long a delivered message may stay unacknowledged before it is delivered again. */
  ackWaitMs?: number;
  /** Delay before a message whose handler threw is delivered again; it doubles with every failure. */
  retryDelayMs?: number;
  /** The longest delay between two deliveries of a failing message. */
  maxRetryDelayMs?: number;
  /**
   * Deliveries after which a message is given up: it moves to the dead-letter subject (an operator can
   * list and replay it, dead-letters.ts) and later messages go on.
   */
  maxDeliver?: number;
  /** Where given-up messages go; `events.deadletter.<consumer>` by default. */
  deadLetterSubject?: string;
}

export interface DurableMessage extends BusMessage {
  /** 1 on first delivery. */
  readonly deliveryCount: number;
}

export type DurableHandler = (msg: DurableMessage) => void | Promise<void>;

/** A durable event as stored, read without consuming it. */
export interface StoredMessage extends BusMessage {
  /** Its position in the events stream. */
  readonly seq: number;
  readonly storedAt: Date;
}

export interface KvEntry {
  value: Uint8Array;
  revision: number;
}

export interface KvOptions {
  /** Entries older than this are removed (bucket-wide; NATS 2.9 has no per-key TTL). */
  ttlMs?: number;
}

/** A key-value bucket with compare-and-set. Keys: letters, digits, `-`, `_`, `=`, `.`, `/`. */
export interface KvStore {
  get(key: string): Promise<KvEntry | null>;
  /** Writes only when the key does not exist; throws KvConflictError otherwise. Returns the revision. */
  create(key: string, value: Uint8Array): Promise<number>;
  /** Writes only when the key's current revision is `expectedRevision`; throws KvConflictError otherwise. */
  update(key: string, value: Uint8Array, expectedRevision: number): Promise<number>;
  put(key: string, value: Uint8Array): Promise<number>;
  delete(key: string): Promise<void>;
}

export type BusStatus = "connected" | "reconnecting" | "closed";

export interface Bus {
  readonly kind: "nats" | "memory";
  /** Current connection state; an in-process bus is connected until closed. */
  status(): BusStatus;
  /** The largest message the bus carries, in bytes (NATS: the server's max_payload). */
  maxPayload(): number;
  /**
   * Bytes published and not yet handed to the network: a NATS client keeps every publish while it is
   * disconnected, and what a slow server does not read yet. Publishing more only grows this; a
   * publisher of bulk data bounds it (TurnPublisher). Always 0 in process.
   */
  unsentBytes(): number;

  /** At-most-once fan-out to current subscribers. */
  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void;
  /**
   * Resolves once what this bus published before the call has gone where subscribers get it: on NATS the
   * server has taken it and passed it on to the subscribing connections (and a subscription of this
   * connection has had it); in process, each handler it went to has been called. A writer awaits it when
   * a reader elsewhere must not act on the old value once the write is answered (a cache invalidation).
   * Rejects with RequestTimeoutError when the server does not answer in time.
   */
  flush(): Promise<void>;
  subscribe(subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription;

  /** Request/reply. Rejects with NoRespondersError when nobody serves the subject, RequestTimeoutError on timeout. */
  request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  serve(subject: string, handler: ReplyHandler, options?: SubscribeOptions): Subscription;

  /**
   * At-least-once events. Subjects must start with `events.`; they are kept for days, so a consumer
   * created after a message was published still gets it. Plain subscribers of the subject see every
   * publish too (at most once each, duplicates included), like any published message.
   */
  publishDurable(subject: string, data: Uint8Array, options?: DurablePublishOptions): Promise<void>;
  /**
   * Replicas that consume with the same `consumer` name share the work: each message is handled by one
   * of them and acknowledged when the handler resolves; a throwing handler gets the message again later.
   */
  consumeDurable(
    subject: string,
    consumer: string,
    handler: DurableHandler,
    options?: DurableConsumerOptions,
  ): Promise<Subscription>;

  /**
   * Durable events stored under `filter` (a subject, wildcards allowed), oldest first from `fromSeq`,
   * without consuming them: what an operator looks at (dead letters).
   */
  readDurable(filter: string, options?: { fromSeq?: number; limit?: number }): Promise<StoredMessage[]>;
  /** Removes one stored durable event (false when there was none at `seq`). */
  deleteDurable(seq: number): Promise<boolean>;

  kv(bucket: string, options?: KvOptions): Promise<KvStore>;

  /** Finishes in-flight handlers, flushes what was published, then disconnects. */
  close(): Promise<void>;
}

export class NoRespondersError extends Error {
  constructor(subject: string) {
    super(`no responders for ${subject}`);
    this.name = "NoRespondersError";
  }
}

export class RequestTimeoutError extends Error {
  constructor(subject: string, timeoutMs: number) {
    super(`request to ${subject} timed out after ${timeoutMs} ms`);
    this.name = "RequestTimeoutError";
  }
}

export class KvConflictError extends Error {
  constructor(bucket: string, key: string) {
    super(`kv ${bucket}/${key}: revision conflict`);
    this.name = "KvConflictError";
  }
}

export class BusClosedError extends Error {
  constructor() {
    super("bus is closed");
    this.name = "BusClosedError";
  }
}
