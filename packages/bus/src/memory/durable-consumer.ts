/**
 * One named durable consumer over the in-process event log, with JetStream's pull-consumer semantics:
 * every matching event is handled once per consumer name (shared by all its subscriptions, each handling
 * one message at a time), acknowledged when the handler resolves, redelivered after a throw (the delay
 * doubling each time, up to `maxRetryDelayMs`) or `ackWaitMs` after a delivery that has not completed,
 * and moved to the dead letters after `maxDeliver` deliveries.
 */
import type { DurableHandler, DurableMessage, Subscription } from "../bus.js";
import { type ConsumerSettings, retryDelayOf } from "../durable-settings.js";
import { InFlight } from "../in-flight.js";
import { type BusLogger, errorText } from "../logger.js";
import type { EventLog } from "./event-log.js";

interface Pending {
  deliveries: number;
  /** delivered: a handler has it; waiting: retry delay running; ready: queued for redelivery. */
  state: "delivered" | "waiting" | "ready";
  timer: NodeJS.Timeout | undefined;
}

interface Worker {
  readonly handler: DurableHandler;
  readonly inFlight: InFlight;
  active: boolean;
  busy: boolean;
}

export class MemoryDurableConsumer {
  /** Next log sequence not yet looked at. */
  #cursor = 1;
  readonly #pending = new Map<number, Pending>();
  /** Sequences waiting for redelivery, oldest first. */
  #ready: number[] = [];
  readonly #workers: Worker[] = [];
  #turn = 0;
  #scheduled = false;

  constructor(
    private readonly log: EventLog,
    readonly name: string,
    private filter: string,
    private settings: ConsumerSettings,
    private readonly logger: BusLogger,
    /** Stores a given-up message as a dead letter under `subject`. */
    private readonly deadLetter: (subject: string, msg: DurableMessage, error: string) => Promise<void>,
  ) {}

  /** A later consumeDurable with the same name updates the filter and settings, like a JetStream update. */
  configure(filter: string, settings: ConsumerSettings): void {
    this.filter = filter;
    this.settings = settings;
  }

  attach(handler: DurableHandler): Subscription {
    const worker: Worker = { handler, inFlight: new InFlight(), active: true, busy: false };
    this.#workers.push(worker);
    this.schedule();
    return { unsubscribe: () => this.#detach(worker) };
  }

  /** Looks for deliverable messages on a later tick (never inside the caller's stack). */
  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#workers].map((worker) => this.#detach(worker)));
    for (const pending of this.#pending.values()) clearTimeout(pending.timer);
    this.#pending.clear();
    this.#ready = [];
  }

  async #detach(worker: Worker): Promise<void> {
    worker.active = false;
    const index = this.#workers.indexOf(worker);
    if (index >= 0) this.#workers.splice(index, 1);
    await worker.inFlight.idle();
  }

  #dispatch(): void {
    for (;;) {
      const worker = this.#idleWorker();
      if (!worker) return;
      const seq = this.#nextSeq();
      if (seq === undefined) return;
      this.#deliver(worker, seq);
    }
  }

  #idleWorker(): Worker | undefined {
    for (let i = 0; i < this.#workers.length; i++) {
      const worker = this.#workers[(this.#turn + i) % this.#workers.length];
      if (worker?.active && !worker.busy) {
        this.#turn = (this.#turn + i + 1) % this.#workers.length;
        return worker;
      }
    }
    return undefined;
  }

  #nextSeq(): number | undefined {
    for (let seq = this.#ready.shift(); seq !== undefined; seq = this.#ready.shift()) {
      if (this.log.get(seq)) return seq;
      this.#forget(seq); // aged out of the log
    }
    const event = this.log.next(this.#cursor, this.filter);
    if (!event) {
      this.#cursor = this.log.endSeq;
      return undefined;
    }
    this.#cursor = event.seq + 1;
    this.#pending.set(event.seq, { deliveries: 0, state: "ready", timer: undefined });
    return event.seq;
  }

  #deliver(worker: Worker, seq: number): void {
    const pending = this.#pending.get(seq);
    const event = this.log.get(seq);
    if (!pending || !event) return;
    const attempt = ++pending.deliveries;
    pending.state = "delivered";
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => this.#ackWaitExpired(seq, attempt), this.settings.ackWaitMs);
    const msg: DurableMessage = {
      subject: event.subject,
      data: event.data.slice(),
      headers: { ...event.headers },
      deliveryCount: attempt,
    };
    worker.busy = true;
    worker.inFlight
      .run(() => worker.handler(msg))
      .then(
        () => this.#acknowledge(seq),
        (err: unknown) => this.#failed(seq, attempt, event.subject, err),
      )
      .finally(() => {
        worker.busy = false;
        this.schedule();
      });
  }

  /** Success acknowledges the message even if an older delivery attempt is the one finishing. */
  #acknowledge(seq: number): void {
    this.#forget(seq);
  }

  #failed(seq: number, attempt: number, subject: string, err: unknown): void {
    const pending = this.#pending.get(seq);
    // Only the current delivery decides; an expired one has already been queued for redelivery.
    if (!pending || pending.deliveries !== attempt || pending.state !== "delivered") return;
    clearTimeout(pending.timer);
    const fields = { consumer: this.name, subject, deliveryCount: attempt, error: errorText(err) };
    if (attempt >= this.settings.maxDeliver) {
      this.#giveUp(seq, attempt, errorText(err), fields);
      return;
    }
    this.logger("warn", "durable handler failed; will redeliver", fields);
    this.#wait(seq, retryDelayOf(this.settings, attempt));
  }

  #ackWaitExpired(seq: number, attempt: number): void {
    const pending = this.#pending.get(seq);
    if (!pending || pending.deliveries !== attempt || pending.state !== "delivered") return;
    if (attempt >= this.settings.maxDeliver) {
      const error = `not acknowledged within ${this.settings.ackWaitMs} ms`;
      this.#giveUp(seq, attempt, error, { consumer: this.name, deliveryCount: attempt });
      return;
    }
    this.#makeReady(seq);
  }

  /** The last delivery failed: the message becomes a dead letter (kept, and retried, if it cannot). */
  #giveUp(seq: number, attempt: number, error: string, fields: Record<string, unknown>): void {
    const event = this.log.get(seq);
    const pending = this.#pending.get(seq);
    if (!event || !pending) {
      this.#forget(seq);
      return;
    }
    pending.state = "waiting";
    const msg = { subject: event.subject, data: event.data, headers: event.headers, deliveryCount: attempt };
    this.deadLetter(this.settings.deadLetterSubject, msg, error).then(
      () => {
        this.logger(
          "error",
          "durable handler failed on last delivery; message moved to the dead letters",
          fields,
        );
        this.#forget(seq);
      },
      (storeErr: unknown) => {
        this.logger("error", "could not store a dead letter; will redeliver", {
          ...fields,
          storeError: errorText(storeErr),
        });
        this.#wait(seq, this.settings.maxRetryDelayMs);
      },
    );
  }

  #wait(seq: number, delayMs: number): void {
    const pending = this.#pending.get(seq);
    if (!pending) return;
    pending.state = "waiting";
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => this.#makeReady(seq), delayMs);
  }

  #makeReady(seq: number): void {
    const pending = this.#pending.get(seq);
    if (!pending || pending.state === "ready") return;
    pending.state = "ready";
    pending.timer = undefined;
    this.#ready.push(seq);
    this.#ready.sort((a, b) => a - b);
    this.schedule();
  }

  #forget(seq: number): void {
    const pending = this.#pending.get(seq);
    if (pending) clearTimeout(pending.timer);
    this.#pending.delete(seq);
    this.#ready = this.#ready.filter((s) => s !== seq);
  }
}
