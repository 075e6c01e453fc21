/**
 * The NATS bus: core NATS for publish/subscribe/request/serve, JetStream (stream AVATAR_EVENTS) for
 * durable events, NATS KV for buckets. The client reconnects forever; while disconnected, core publishes
 * are buffered by the client, requests fail at their own timeout, and durable publishes, KV operations and
 * consumer set-up fail after `timeoutMs`.
 */
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  type Bus,
  BusClosedError,
  type BusHeaders,
  type BusStatus,
  type DurableConsumerOptions,
  type DurableHandler,
  type DurablePublishOptions,
  type KvOptions,
  type KvStore,
  type MessageHandler,
  type ReplyHandler,
  type RequestOptions,
  RequestTimeoutError,
  type StoredMessage,
  type SubscribeOptions,
  type Subscription,
} from "./bus.js";
import {
  assertConsumerName,
  assertDurableFilter,
  assertDurablePublishSubject,
  consumerSettings,
} from "./durable-settings.js";
import { assertBucketName, bucketTtlMs } from "./kv-names.js";
import { Lifecycle } from "./lifecycle.js";
import { type BusLogger, errorText, stderrLogger } from "./logger.js";
import { NatsCore } from "./nats/core.js";
import { type DurableDeps, startDurableConsumer } from "./nats/durable-consumer.js";
import { isMessageNotFound, isMissingStream } from "./nats/errors.js";
import { EVENTS_STREAM, ensureEventsStream } from "./nats/events-stream.js";
import { fromNatsHeaders, toNatsHeaders } from "./nats/headers.js";
import { openNatsKvStore } from "./nats/kv-store.js";
import { watchStatus } from "./nats/status.js";
import { bounded, withTimeout } from "./nats/timeout.js";
import { unsentBytes } from "./nats/unsent-bytes.js";

/** Bound for JetStream work: durable publish, KV operations, consumer and bucket set-up, close's drain. */
export const DEFAULT_NATS_TIMEOUT_MS = 5_000;

export interface NatsBusOptions {
  /** e.g. nats://127.0.0.1:4222 (comma-separated for several servers). */
  url: string;
  /** Connection name shown by the server's monitoring. */
  name?: string;
  logger?: BusLogger;
  /** See DEFAULT_NATS_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** Connects (failing if the first connection fails) and makes sure the events stream exists. */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const logger = options.logger ?? stderrLogger;
  const timeoutMs = options.timeoutMs ?? DEFAULT_NATS_TIMEOUT_MS;
  const nc = await connect({
    servers: options.url.split(",").map((s) => s.trim()),
    name: options.name,
    maxReconnectAttempts: -1,
    timeout: timeoutMs,
    // Otherwise every request (each KV read and write of the rate limiter) builds an Error for its stack.
    noAsyncTraces: true,
  });
  const status = watchStatus(nc, logger);
  try {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    await bounded(
      () => ensureEventsStream(jsm),
      timeoutMs,
      () => new RequestTimeoutError("stream setup", timeoutMs),
    );
    return new NatsBus(nc, jsm, status, logger, timeoutMs);
  } catch (err) {
    await nc.close();
    throw err;
  }
}

function notFoundAsNull(err: unknown): null {
  if (isMessageNotFound(err)) return null;
  throw err;
}

function notFoundAsFalse(err: unknown): false {
  if (isMessageNotFound(err)) return false;
  throw err;
}

/** nats-server's default max_payload, for the moment before the server has sent its INFO. */
const NATS_DEFAULT_MAX_PAYLOAD = 1024 * 1024;

class NatsBus implements Bus {
  readonly kind = "nats" as const;
  readonly #lifecycle = new Lifecycle();
  readonly #core: NatsCore;
  readonly #durable: DurableDeps;
  readonly #kvm: Kvm;
  readonly #workers = new Set<Subscription>();
  #streamReady: Promise<void> | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly connectionStatus: () => BusStatus,
    private readonly logger: BusLogger,
    private readonly timeoutMs: number,
  ) {
    this.#core = new NatsCore(nc, logger);
    const js = jetstream(nc, { timeout: timeoutMs });
    this.#kvm = new Kvm(js);
    this.#durable = {
      js,
      jsm,
      ensureStream: () => this.#ensureStream(),
      publish: (subject, data, headers) => this.publishDurable(subject, data, { headers }),
      logger,
      timeoutMs,
    };
  }

  status(): BusStatus {
    return this.#lifecycle.closed ? "closed" : this.connectionStatus();
  }

  maxPayload(): number {
    return this.nc.info?.max_payload ?? NATS_DEFAULT_MAX_PAYLOAD;
  }

  unsentBytes(): number {
    return unsentBytes(this.nc);
  }

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    this.#lifecycle.assertUsable();
    this.#core.publish(subject, data, headers);
  }

  subscribe(subject: string, handler: MessageHandler, options?: SubscribeOptions): Subscription {
    this.#lifecycle.assertOpen();
    return this.#core.subscribe(subject, handler, options);
  }

  async flush(): Promise<void> {
    this.#lifecycle.assertUsable();
    // A PING after the publishes: the server answers it once it has handled everything sent before.
    await withTimeout(
      this.nc.flush(),
      this.timeoutMs,
      () => new RequestTimeoutError("flush", this.timeoutMs),
    );
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.#lifecycle.assertUsable();
    return this.#core.request(subject, data, options.timeoutMs, options.headers);
  }

  serve(subject: string, handler: ReplyHandler, options?: SubscribeOptions): Subscription {
    this.#lifecycle.assertOpen();
    return this.#core.serve(subject, handler, options);
  }

  async publishDurable(
    subject: string,
    data: Uint8Array,
    options: DurablePublishOptions = {},
  ): Promise<void> {
    this.#lifecycle.assertUsable();
    assertDurablePublishSubject(subject);
    const publish = () =>
      this.#durable.js.publish(subject, data, {
        msgID: options.msgId,
        headers: toNatsHeaders(options.headers),
        timeout: this.timeoutMs,
      });
    const attempt = async () => {
      try {
        await publish();
      } catch (err) {
        if (!isMissingStream(err)) throw err;
        await this.#ensureStream();
        await publish();
      }
    };
    await bounded(attempt, this.timeoutMs, () => new RequestTimeoutError(subject, this.timeoutMs));
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
    const worker = await startDurableConsumer(
      this.#durable,
      subject,
      consumer,
      handler,
      consumerSettings(consumer, options),
    );
    if (this.#lifecycle.closing) {
      // close() began while the consumer was being set up and did not see it.
      await worker.unsubscribe();
      throw new BusClosedError();
    }
    this.#workers.add(worker);
    return {
      unsubscribe: async () => {
        this.#workers.delete(worker);
        await worker.unsubscribe();
      },
    };
  }

  async readDurable(
    filter: string,
    options: { fromSeq?: number; limit?: number } = {},
  ): Promise<StoredMessage[]> {
    this.#lifecycle.assertUsable();
    assertDurableFilter(filter);
    const limit = options.limit ?? 100;
    const out: StoredMessage[] = [];
    let seq = Math.max(1, options.fromSeq ?? 1);
    while (out.length < limit) {
      // The next message at or after `seq` whose subject matches (STREAM.MSG.GET with next_by_subj).
      const query = { seq, next_by_subj: filter } as unknown as { seq: number };
      const stored = await bounded(
        () => this.jsm.streams.getMessage(EVENTS_STREAM, query).catch(notFoundAsNull),
        this.timeoutMs,
        () => new RequestTimeoutError(`read ${filter}`, this.timeoutMs),
      );
      if (!stored) break;
      out.push({
        seq: stored.seq,
        subject: stored.subject,
        data: stored.data,
        headers: fromNatsHeaders(stored.header),
        storedAt: stored.time,
      });
      seq = stored.seq + 1;
    }
    return out;
  }

  async deleteDurable(seq: number): Promise<boolean> {
    this.#lifecycle.assertUsable();
    return bounded(
      () => this.jsm.streams.deleteMessage(EVENTS_STREAM, seq).catch(notFoundAsFalse),
      this.timeoutMs,
      () => new RequestTimeoutError(`delete ${seq}`, this.timeoutMs),
    );
  }

  async kv(bucket: string, options: KvOptions = {}): Promise<KvStore> {
    this.#lifecycle.assertUsable();
    assertBucketName(bucket);
    const deps = {
      kvm: this.#kvm,
      jsm: this.jsm,
      timeoutMs: this.timeoutMs,
      assertUsable: () => this.#lifecycle.assertUsable(),
    };
    return openNatsKvStore(deps, bucket, bucketTtlMs(options));
  }

  /** Stops deliveries, waits for running handlers (they may still publish), then drains the connection. */
  close(): Promise<void> {
    return this.#lifecycle.close(async () => {
      await Promise.all([this.#core.close(), ...[...this.#workers].map((w) => w.unsubscribe())]);
      try {
        await withTimeout(this.nc.drain(), this.timeoutMs, () => new Error("drain timed out"));
      } catch (err) {
        this.logger("warn", "nats drain failed; closing", { error: errorText(err) });
        await this.nc.close().catch(() => undefined);
      }
    });
  }

  /** One stream check at a time; callers arriving meanwhile share it. */
  #ensureStream(): Promise<void> {
    if (!this.#streamReady) {
      this.#streamReady = ensureEventsStream(this.jsm).finally(() => {
        this.#streamReady = null;
      });
    }
    return this.#streamReady;
  }
}
