/**
 * A durable JetStream pull consumer feeding one handler, one message at a time: each loop turn pulls a
 * single message, runs the handler, then acks (success), naks with a growing delay (failure), or on the
 * last allowed delivery stores it as a dead letter and terms it (a dead letter that cannot be stored
 * keeps the message: it is naked again). Several subscriptions with one consumer name share its messages.
 * The loop survives outages: after any pull failure it backs off, re-creates stream and consumer if they
 * are gone, and pulls again.
 */
import {
  AckPolicy,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import {
  type BusHeaders,
  type DurableHandler,
  type DurableMessage,
  RequestTimeoutError,
  type Subscription,
} from "../bus.js";
import { deadLetterOf } from "../dead-letters.js";
import { type ConsumerSettings, retryDelayOf } from "../durable-settings.js";
import { InFlight } from "../in-flight.js";
import { type BusLogger, errorText } from "../logger.js";
import { isClosedConnection, isMissingStream } from "./errors.js";
import { EVENTS_STREAM } from "./events-stream.js";
import { fromNatsHeaders } from "./headers.js";
import { durableName } from "./names.js";
import { bounded, sleep } from "./timeout.js";

/** How long one pull waits on the server for a message before the loop pulls again. */
const PULL_EXPIRES_MS = 5_000;
/** Our own guard in case a pull neither yields nor ends (e.g. it was sent just before a disconnect). */
const PULL_WATCHDOG_MS = PULL_EXPIRES_MS + 5_000;
const MAX_BACKOFF_MS = 5_000;

export interface DurableDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  ensureStream(): Promise<void>;
  /** Stores a durable message (the bus's publishDurable): dead letters go through it. */
  publish(subject: string, data: Uint8Array, headers: BusHeaders): Promise<void>;
  logger: BusLogger;
  timeoutMs: number;
}

export async function startDurableConsumer(
  deps: DurableDeps,
  subject: string,
  consumer: string,
  handler: DurableHandler,
  settings: ConsumerSettings,
): Promise<Subscription> {
  const name = durableName(consumer);
  const config: Partial<ConsumerConfig> = {
    durable_name: name,
    filter_subject: subject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(settings.ackWaitMs),
    // Unlimited on the server: the loop decides when a message is given up (after storing it as a
    // dead letter), so that it is never dropped without one.
    max_deliver: -1,
  };
  // Adding an existing durable updates it (filter, ack wait, max deliver).
  const ensureConsumer = async () => {
    try {
      await deps.jsm.consumers.add(EVENTS_STREAM, config);
    } catch (err) {
      if (!isMissingStream(err)) throw err;
      await deps.ensureStream();
      await deps.jsm.consumers.add(EVENTS_STREAM, config);
    }
  };
  const timedOut = () => new RequestTimeoutError(`consumer ${consumer} setup`, deps.timeoutMs);
  const pullConsumer = await bounded(
    async () => {
      await ensureConsumer();
      return deps.js.consumers.get(EVENTS_STREAM, name);
    },
    deps.timeoutMs,
    timedOut,
  );
  const recover = () => bounded(ensureConsumer, deps.timeoutMs, timedOut);
  const deadLetter = (msg: DurableMessage, error: string) => {
    const letter = deadLetterOf(msg, consumer, error);
    return deps.publish(settings.deadLetterSubject, letter.data, letter.headers);
  };
  return new PullLoop(pullConsumer, handler, settings, recover, deadLetter, deps.logger, consumer);
}

class PullLoop implements Subscription {
  readonly #inFlight = new InFlight();
  #stopped = false;
  #batch: ConsumerMessages | null = null;

  constructor(
    private readonly consumer: Consumer,
    private readonly handler: DurableHandler,
    private readonly settings: ConsumerSettings,
    private readonly recover: () => Promise<void>,
    private readonly deadLetter: (msg: DurableMessage, error: string) => Promise<void>,
    private readonly logger: BusLogger,
    private readonly name: string,
  ) {
    this.#run().catch((err: unknown) =>
      this.logger("error", "durable pull loop stopped", { consumer: this.name, error: errorText(err) }),
    );
  }

  async unsubscribe(): Promise<void> {
    this.#stopped = true;
    this.#batch?.stop();
    await this.#inFlight.idle();
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stopped) {
      try {
        await this.#pullOnce();
        if (failures > 0) this.logger("info", "durable pull recovered", { consumer: this.name });
        failures = 0;
      } catch (err) {
        if (this.#stopped) break;
        if (isClosedConnection(err)) {
          this.logger("error", "nats connection closed; durable consumer stopped", { consumer: this.name });
          break;
        }
        failures++;
        if (failures === 1) {
          this.logger("warn", "durable pull failed; retrying", {
            consumer: this.name,
            error: errorText(err),
          });
        }
        await sleep(Math.min(250 * 2 ** (failures - 1), MAX_BACKOFF_MS));
        if (!this.#stopped) await this.recover().catch(() => undefined);
      }
    }
  }

  async #pullOnce(): Promise<void> {
    const batch = await this.consumer.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
    this.#batch = batch;
    const watchdog = setTimeout(() => batch.stop(), PULL_WATCHDOG_MS);
    try {
      if (this.#stopped) batch.stop();
      for await (const msg of batch) {
        clearTimeout(watchdog);
        if (this.#stopped) {
          msg.nak(); // let another subscription have it right away
          continue;
        }
        await this.#inFlight.run(() => this.#handle(msg));
      }
    } finally {
      clearTimeout(watchdog);
      this.#batch = null;
    }
  }

  async #handle(msg: JsMsg): Promise<void> {
    const deliveryCount = msg.info.deliveryCount;
    const message: DurableMessage = {
      subject: msg.subject,
      data: msg.data,
      headers: fromNatsHeaders(msg.headers),
      deliveryCount,
    };
    try {
      await this.handler(message);
      msg.ack();
    } catch (err) {
      const fields = { consumer: this.name, subject: msg.subject, deliveryCount, error: errorText(err) };
      if (deliveryCount < this.settings.maxDeliver) {
        this.logger("warn", "durable handler failed; will redeliver", fields);
        msg.nak(retryDelayOf(this.settings, deliveryCount));
        return;
      }
      try {
        await this.deadLetter(message, errorText(err));
        this.logger(
          "error",
          "durable handler failed on last delivery; message moved to the dead letters",
          fields,
        );
        msg.term();
      } catch (storeErr) {
        this.logger("error", "could not store a dead letter; will redeliver", {
          ...fields,
          storeError: errorText(storeErr),
        });
        msg.nak(this.settings.maxRetryDelayMs);
      }
    }
  }
}
