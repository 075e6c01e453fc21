import type { Bus } from "@avatar/bus";
import type { Logger } from "@avatar/runtime";

/**
 * The server frames of every session a worker runs, handed to the bus together once per turn of the
 * event loop (setImmediate) rather than each as it is made. The NATS client writes to its socket once
 * for what was published since its last write (a microtask later), and every audio chunk a worker reads
 * is a turn of its own, so acknowledging each chunk as it came cost a socket write per chunk; gathered,
 * the frames of all the chunks read in one turn leave in one write. Frames keep their order, and leave
 * before the next turn's input is read.
 */
export class FrameOutbox {
  private waiting: { subject: string; data: Uint8Array }[] = [];
  private scheduled = false;

  constructor(
    private readonly bus: Pick<Bus, "publish">,
    private readonly log: Logger,
  ) {}

  publish(subject: string, data: Uint8Array): void {
    this.waiting.push({ subject, data });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Publishes what waits now (a stopping worker calls it before its bus closes). */
  flush(): void {
    this.scheduled = false;
    const frames = this.waiting;
    this.waiting = [];
    let failed = 0;
    let firstError: unknown;
    for (const { subject, data } of frames) {
      try {
        this.bus.publish(subject, data);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
    // A closed bus refuses every frame alike: one line says so.
    if (failed > 0) this.log.warn("server frames were not published", { failed, err: firstError });
  }
}
