/**
 * The in-process bus: the same semantics as the NATS bus (see bus.ts), for tests and single-process runs.
 * Nothing survives the process.
 */
import type {
  Bus,
  BusHeaders,
  BusStatus,
  DurableConsumerOptions,
  DurableHandler,
  DurablePublishOptions,
  KvOptions,
  KvStore,
  MessageHandler,
  ReplyHandler,
  RequestOptions,
  StoredMessage,
  SubscribeOptions,
  Subscription,
} from "./bus.js";
import { deadLetterOf } from "./dead-letters.js";
import {
  assertConsumerName,
  assertDurableFilter,
  assertDurablePublishSubject,
  consumerSettings,
} from "./durable-settings.js";
import { assertBucketName, bucketTtlMs } from "./kv-names.js";
import { Lifecycle } from "./lifecycle.js";
import { type BusLogger, stderrLogger } from "./logger.js";
import { MemoryDurableConsumer } from "./memory/durable-consumer.js";
import { EventLog } from "./memory/event-log.js";
import { MemoryKvBucket, memoryKvStore } from "./memory/kv-bucket.js";
import { MemoryPubSub } from "./memory/pubsub.js";

export interface MemoryBusOptions {
  /** Where handler failures and dropped messages are reported; default: warnings/errors to stderr. */
  logger?: BusLogger;
}

export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  return new MemoryBus(options.logger ?? stderrLogger);
}

class MemoryBus implements Bus {
  readonly kind = "memory" as const;
  readonly #lifecycle = new Lifecycle();
  readonly #pubsub: MemoryPubSub;
  readonly #log = new EventLog();
  readonly #consumers = new Map<string, MemoryDurableConsumer>();
  readonly #buckets = new Map<string, MemoryKvBucket>();
  readonly #logger: BusLogger;

  constructor(logger: BusLogger) {
    this.#logger = logger;
    this.#pubsub = new MemoryPubSub(logger);
  }

  status(): BusStatus {
    return this.#lifecycle.closed ? "closed" : "connected";
  }

  maxPayload(): number {
    return Number.POSITIVE_INFINITY;
  }

  unsentBytes(): number {
    return 0;
  }

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    this.#lifecycle.assertUsable();
    this.#pubsub.publish(subject, data, headers);
  }

  subscribe(subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription {
    this.#lifecycle.assertOpen();
    return this.#pubsub.subscribe(subject, handler, options);
  }

  async flush(): Promise<void> {
    this.#lifecycle.assertUsable();
    // Deliveries are setImmediate callbacks, run in order: this one comes after those already queued.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.#lifecycle.assertUsable();
    return this.#pubsub.request(subject, data, options.timeoutMs, options.headers);
  }

  serve(subject: string, handler: ReplyHandler, options?: SubscribeOptions): Subscription {
    this.#lifecycle.assertOpen();
    return this.#pubsub.serve(subject, handler, options);
  }

  async publishDurable(
    subject: string,
    data: Uint8Array,
    options: DurablePublishOptions = {},
  ): Promise<void> {
    this.#lifecycle.assertUsable();
    assertDurablePublishSubject(subject);
    // As on NATS, where a JetStream publish is also a plain message: live subscribers see every publish,
    // even one the stream drops as a duplicate.
    this.#pubsub.publish(subject, data, options.headers);
    if (!this.#log.append(subject, data, options.headers ?? {}, options.msgId)) return;
    for (const consumer of this.#consumers.values()) consumer.schedule();
  }

  async consumeDurable(
    subject: string,
    consumer: string,
    handler: DurableHandler,
    options?: DurableConsumerOptions,
  ): Promise<Subscription> {
    this.#lifecycle.assertOpen();
    assertDurableFilter(subject);
    assertConsumerName(consumer);
    const settings = consumerSettings(consumer, options);
    let state = this.#consumers.get(consumer);
    if (state) {
      state.configure(subject, settings);
    } else {
      state = new MemoryDurableConsumer(
        this.#log,
        consumer,
        subject,
        settings,
        this.#logger,
        (to, msg, err) => {
          const letter = deadLetterOf(msg, consumer, err);
          return this.publishDurable(to, letter.data, { headers: letter.headers });
        },
      );
      this.#consumers.set(consumer, state);
    }
    return state.attach(handler);
  }

  async readDurable(
    filter: string,
    options: { fromSeq?: number; limit?: number } = {},
  ): Promise<StoredMessage[]> {
    this.#lifecycle.assertUsable();
    assertDurableFilter(filter);
    const limit = options.limit ?? 100;
    const out: StoredMessage[] = [];
    for (
      let e = this.#log.next(options.fromSeq ?? 1, filter);
      e && out.length < limit;
      e = this.#log.next(e.seq + 1, filter)
    ) {
      out.push({
        seq: e.seq,
        subject: e.subject,
        data: e.data.slice(),
        headers: { ...e.headers },
        storedAt: new Date(e.storedAt),
      });
    }
    return out;
  }

  async deleteDurable(seq: number): Promise<boolean> {
    this.#lifecycle.assertUsable();
    return this.#log.delete(seq);
  }

  async kv(bucket: string, options: KvOptions = {}): Promise<KvStore> {
    this.#lifecycle.assertUsable();
    assertBucketName(bucket);
    const ttlMs = bucketTtlMs(options);
    let store = this.#buckets.get(bucket);
    if (store) {
      store.setTtl(ttlMs);
    } else {
      store = new MemoryKvBucket(bucket, ttlMs);
      this.#buckets.set(bucket, store);
    }
    return memoryKvStore(store, () => this.#lifecycle.assertUsable());
  }

  close(): Promise<void> {
    return this.#lifecycle.close(async () => {
      await Promise.all([this.#pubsub.close(), ...[...this.#consumers.values()].map((c) => c.close())]);
    });
  }
}
