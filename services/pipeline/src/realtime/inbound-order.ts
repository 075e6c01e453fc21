import { type Clock, Timer } from "./clock.js";

/**
 * Acknowledgements wait this long, so that one covers a burst of messages; most go out sooner, with the
 * next frame sent anyway (takeDue).
 */
const ACK_DELAY_MS = 100;

interface Connection {
  /** Every message up to this number was handled (here, or by a former owner: the gateway's floor). */
  handled: number;
  /** The highest number acknowledged to the gateway. */
  acknowledged: number;
  /** A resend was asked for the current gap. */
  askedAgain: boolean;
}

/**
 * The order of one session's client messages, per connection, as the gateway numbers them: each message
 * is handled once and in order. A gateway keeps what it sent until it is acknowledged and sends it again
 * when asked (or when no acknowledgement comes), so a message lost on the way (a bus outage, a worker
 * that died, the moment of a takeover) arrives later instead of never: a number already handled is a
 * repeat and is dropped, a number beyond the next one means some were lost and asks for them again.
 * Unnumbered messages (0) are handled as they come.
 */
export class InboundOrder {
  private readonly connections = new Map<string, Connection>();
  private readonly ackTimer: Timer;

  constructor(
    clock: Clock,
    /** Sends an acknowledgement up to `seq` to the connection; `resend` asks for what follows again. */
    private readonly acknowledge: (connectionId: string, seq: number, resend: boolean) => void,
  ) {
    this.ackTimer = new Timer(clock);
  }

  /** A message frame numbered `seq`; `acked`: the gateway's floor. Answers whether to handle it. */
  message(connectionId: string, seq: number, acked: number): boolean {
    if (seq === 0) return true;
    const c = this.connection(connectionId, acked);
    if (seq <= c.handled) {
      // A repeat: the gateway did not hear its acknowledgement (lost, or it reads none that travel with
      // events), so an acknowledgement of its own goes out again.
      c.acknowledged = Math.min(c.acknowledged, seq - 1);
      this.scheduleAck();
      return false;
    }
    if (seq > c.handled + 1) {
      this.askAgain(connectionId, c);
      return false;
    }
    c.handled = seq;
    c.askedAgain = false;
    this.scheduleAck();
    return true;
  }

  /**
   * A socket frame (opened, heartbeat) saying the last number sent: what has not arrived by now was
   * lost, since a connection's frames arrive in order.
   */
  socket(connectionId: string, lastSent: number, acked: number): void {
    if (lastSent === 0) return;
    const c = this.connection(connectionId, acked);
    if (lastSent > c.handled) this.askAgain(connectionId, c, true);
    else if (c.acknowledged < c.handled) this.scheduleAck();
  }

  forget(connectionId: string): void {
    this.connections.delete(connectionId);
  }

  /** Sends the acknowledgements due now (before a handover, so the next owner starts where this one ended). */
  flush(): void {
    for (const { connectionId, seq } of this.takeDue()) this.acknowledge(connectionId, seq, false);
  }

  /** The acknowledgements due now, counted as sent: the caller sends them along with a frame of its own. */
  takeDue(): { connectionId: string; seq: number }[] {
    this.ackTimer.clear();
    const due: { connectionId: string; seq: number }[] = [];
    for (const [connectionId, c] of this.connections) {
      if (c.acknowledged >= c.handled) continue;
      c.acknowledged = c.handled;
      due.push({ connectionId, seq: c.handled });
    }
    return due;
  }

  stop(): void {
    this.ackTimer.clear();
  }

  private connection(id: string, acked: number): Connection {
    let c = this.connections.get(id);
    if (!c) {
      c = { handled: 0, acknowledged: 0, askedAgain: false };
      this.connections.set(id, c);
    }
    if (acked > c.handled) {
      c.handled = acked;
      c.acknowledged = Math.max(c.acknowledged, acked);
    }
    return c;
  }

  private askAgain(id: string, c: Connection, always = false): void {
    if (c.askedAgain && !always) return;
    c.askedAgain = true;
    c.acknowledged = c.handled;
    this.acknowledge(id, c.handled, true);
  }

  private scheduleAck(): void {
    if (!this.ackTimer.armed) this.ackTimer.arm(ACK_DELAY_MS, () => this.flush());
  }
}
