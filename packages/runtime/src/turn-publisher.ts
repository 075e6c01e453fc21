import type { Bus } from "@avatar/bus";
import type { Logger } from "./log.js";

/**
 * Messages handed to the bus together once per turn of the event loop (setImmediate) rather than each
 * as it is made. The NATS client writes to its socket once for what was published since its last write
 * (a microtask later), and every input a process reads (an audio chunk at a worker, a client message at
 * a gateway) is a turn of its own, so publishing each as it came cost a socket write per input;
 * gathered, what all the inputs read in one turn made leaves in one write. Messages keep their order,
 * and leave before the next turn's input is read. What the bus would refuse now (it is closed, or the
 * message is larger than it carries) is refused at once, so that its caller can say so; what it refuses
 * when the turn ends (it closed in between) is counted in one warning (`what` names the messages).
 */
export class TurnPublisher {
  private waiting: { subject: string; data: Uint8Array }[] = [];
  private scheduled = false;

  constructor(
    private readonly bus: Pick<Bus, "publish" | "status" | "maxPayload">,
    private readonly log: Logger,
    private readonly what = "messages",
  ) {}

  /** Queues the message for the end of the turn; false (nothing queued, a warning) when the bus would refuse it. */
  publish(subject: string, data: Uint8Array): boolean {
    const status = this.bus.status();
    if (status === "closed" || data.byteLength > this.bus.maxPayload()) {
      this.log.warn(`${this.what} not published`, { subject, bytes: data.byteLength, status });
      return false;
    }
    this.waiting.push({ subject, data });
    if (this.scheduled) return true;
    this.scheduled = true;
    setImmediate(() => this.flush());
    return true;
  }

  /** Publishes what waits now (a process stopping calls it before its bus closes). */
  flush(): void {
    this.scheduled = false;
    const waiting = this.waiting;
    this.waiting = [];
    let failed = 0;
    let firstError: unknown;
    for (const { subject, data } of waiting) {
      try {
        this.bus.publish(subject, data);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
    // A closed bus refuses every message alike: one line says so.
    if (failed > 0) this.log.warn(`${this.what} were not published`, { failed, err: firstError });
  }
}
