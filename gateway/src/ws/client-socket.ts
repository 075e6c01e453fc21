import { type Bus, NoRespondersError, type Subscription } from "@avatar/bus";
import {
  type ClientFrame,
  ClientFrameSchema,
  ConnectionKind,
  type ServerFrame,
  ServerFrameSchema,
} from "@avatar/contracts/pipeline";
import {
  type Logger,
  type PublishOutcome,
  realtimeSubjects,
  type TurnPublisher,
  wsMessagesResent,
} from "@avatar/runtime";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import type { RawData, WebSocket } from "ws";
import { messageFrame } from "./message-frame.js";
import { type OutboundLimits, OutboundMessages, type Unacknowledged } from "./outbound-messages.js";
import { ResendPacing } from "./resend-pacing.js";
import { type Corkable, turnWrites } from "./turn-writes.js";

export interface ClientSocketOptions {
  bus: Bus;
  log: Logger;
  heartbeatMs: number;
  /** How long a new socket waits for a worker of its session to acknowledge it (asking again meanwhile). */
  openTimeoutMs: number;
  pingMs: number;
  /** Client messages kept until a worker acknowledges them. */
  resendLimits: OutboundLimits;
  /** The socket under `ws`: what is sent in one turn leaves in one write (turn-writes.ts). */
  transport?: Corkable;
  /**
   * Hands the frames for the workers to the bus once per turn: the gateway's sockets share one, so that
   * the messages of all the clients read in one turn leave in one write to NATS.
   */
  publisher: Pick<TurnPublisher, "publish" | "wouldHoldBack">;
}

/** Why messages go to the worker again (avatar_ws_messages_resent_total's reason). */
type ResendReason = "overdue" | "asked" | "held";

/** One OPENED request waits at most this long; the socket asks again until openTimeoutMs. */
const OPEN_ATTEMPT_MS = 2_000;
/** After "no responders" (nobody runs the session right now: it is moving), ask again after this. */
const OPEN_RETRY_MS = 250;

/** A client that does not read what it is sent is closed before the gateway holds more than this. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** The longest wait between two resends of a window that nobody acknowledges. */
const MAX_RESEND_INTERVAL_MS = 60_000;
/** How often a socket whose messages a backlogged bus held back tries them again. */
const HELD_RETRY_MS = 100;
/** Close reasons are limited to 123 bytes by the protocol. */
const MAX_REASON_BYTES = 123;

/**
 * One event WebSocket of a session, relayed over the bus: every client text message goes to the
 * session's worker as a ClientFrame on rt.<id>.in (plus OPENED, HEARTBEAT and CLOSED socket frames),
 * and the worker's ServerFrames on rt.<id>.out for this socket or for all of the session's sockets come
 * back to the client, closing the socket when they say so. Which gateway replica holds the socket does
 * not matter to the worker, nor which worker runs the session: the subjects name only the session.
 *
 * Client messages are numbered and kept until a worker acknowledges them, and sent again when the
 * worker asks (a gap) or no acknowledgement came within a heartbeat: a bus outage or a session moving
 * to another worker loses none (up to the kept limits, beyond which the client is told). Frames of a
 * worker that lost the session (an older ownership epoch than one seen) are dropped.
 */
export class ClientSocket {
  readonly connectionId = crypto.randomUUID();
  private subscription: Subscription | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private ping: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private endTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly outbound: OutboundMessages;
  private readonly pacing: ResendPacing;
  /** The newest ownership epoch seen on the session's frames. */
  private epoch = 0;
  private readonly holdWrites: (() => void) | undefined;
  /**
   * The first message a backlogged bus held back (0: none). The worker takes messages only in order,
   * so the ones after it wait too, and all go out, in order, once the bus takes them (tryHeld).
   */
  private heldFrom = 0;
  private heldRetry: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    readonly sessionId: string,
    private readonly options: ClientSocketOptions,
  ) {
    this.outbound = new OutboundMessages(options.resendLimits);
    this.pacing = new ResendPacing(
      options.heartbeatMs,
      Math.max(options.heartbeatMs, MAX_RESEND_INTERVAL_MS),
    );
    this.holdWrites = options.transport && turnWrites(options.transport);
  }

  /** Starts relaying; resolves once the worker has acknowledged the socket (or it was closed). */
  async start(): Promise<void> {
    const { bus } = this.options;
    this.subscription = bus.subscribe(realtimeSubjects.serverFrames(this.sessionId), (msg) =>
      this.deliver(fromBinary(ServerFrameSchema, msg.data)),
    );
    this.ws.on("message", (data, isBinary) => this.fromClient(data, isBinary));
    this.ws.on("close", () => this.onClose());
    this.ws.on("error", (err) => this.options.log.debug("event socket error", { err }));
    this.ws.on("pong", () => {
      this.awaitingPong = false;
    });
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.ping = setInterval(() => this.checkAlive(), this.options.pingMs);
    // Asked, not published: no answer means that no worker runs the session right now (it may be
    // moving to another worker: ask again until the open timeout).
    const deadline = Date.now() + this.options.openTimeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      try {
        await bus.request(
          realtimeSubjects.clientFrames(this.sessionId),
          this.socketFrame(ConnectionKind.OPENED),
          {
            timeoutMs: Math.max(1, Math.min(OPEN_ATTEMPT_MS, left)),
          },
        );
        return;
      } catch (err) {
        if (this.closed || this.endTimer) return;
        if (Date.now() + OPEN_RETRY_MS < deadline) {
          if (err instanceof NoRespondersError) await new Promise((r) => setTimeout(r, OPEN_RETRY_MS));
          continue;
        }
        this.options.log.warn("no worker acknowledged the event socket", { sessionId: this.sessionId, err });
        this.sendOwnEvent("session_unavailable", "no pipeline worker runs this session; try again later");
        this.ws.close(1011, "session unavailable");
        return;
      }
    }
  }

  /**
   * The session has ended. Its worker says so on the socket (session.stopped, then a close); when the
   * worker is gone and the socket is still open after `graceMs`, the gateway says it instead.
   */
  sessionEnded(endReason: string, graceMs: number): void {
    if (this.closed || this.endTimer) return;
    this.endTimer = setTimeout(() => {
      if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
      this.send(
        JSON.stringify({
          type: "session.stopped",
          event_id: crypto.randomUUID(),
          source_event_id: null,
          session_id: this.sessionId,
          end_reason: endReason,
        }),
      );
      this.ws.close(1000, "session ended");
    }, graceMs);
  }

  /** The gateway is going away: the client may reconnect (with a new ticket) through another replica. */
  shutdown(): void {
    if (!this.closed) this.ws.close(1001, "server shutting down");
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    if (isBinary) {
      this.sendOwnEvent("invalid_message", "binary frames are not supported: send JSON text frames");
      return;
    }
    const utf8 = Buffer.isBuffer(data)
      ? data
      : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
    const { seq, dropped } = this.outbound.add(utf8, Date.now());
    if (this.heldFrom === 0) {
      const outcome = this.publish(this.messageFrame(seq, utf8));
      if (outcome === "backlogged") this.holdFrom(seq);
      if (outcome === "refused") {
        this.outbound.unsend(seq);
        this.sendOwnEvent("message_not_relayed", "the message could not be passed on; send it again");
      }
    }
    if (dropped > 0) {
      this.sendOwnEvent(
        "message_not_relayed",
        `${dropped} earlier message(s) could not be passed on while the session's server was unreachable; send them again`,
      );
    }
  }

  /** The heartbeat: the socket is still here, and this is the last message sent (and what was missed). */
  private beat(): void {
    this.relay(ConnectionKind.HEARTBEAT);
    if (this.outbound.overdue(Date.now() - this.pacing.intervalMs)) this.resend("overdue");
  }

  /** Sends the unacknowledged messages again, unless they went out less than the pacing's interval ago. */
  private resend(reason: Exclude<ResendReason, "held">): void {
    const now = Date.now();
    if (!this.pacing.mayResend(now)) return;
    this.pacing.resent(now);
    this.sendFrom(this.outbound.resend(now), reason);
  }

  /** Messages in order, until the bus holds one back (they wait with it) or refuses it (nothing more now). */
  private sendFrom(messages: readonly Unacknowledged[], reason: ResendReason): void {
    // Those from the first held back on never went out: whatever sends them now, they count as held.
    const firstHeld = this.heldFrom === 0 ? Number.POSITIVE_INFINITY : this.heldFrom;
    let again = 0;
    let held = 0;
    for (const m of messages) {
      const outcome = this.publish(this.messageFrame(m.seq, m.utf8));
      if (outcome === "backlogged") this.holdFrom(m.seq);
      if (outcome !== "queued") break;
      if (m.seq >= firstHeld) held++;
      else again++;
    }
    if (again > 0) wsMessagesResent.inc({ reason }, again);
    if (held > 0) wsMessagesResent.inc({ reason: "held" }, held);
    if (again + held === messages.length) this.heldFrom = 0;
  }

  private holdFrom(seq: number): void {
    this.heldFrom = seq;
    this.heldRetry ??= setTimeout(() => this.tryHeld(), HELD_RETRY_MS);
  }

  /** Messages held back never went out: they go now (not paced as a resend is) if the bus takes them. */
  private tryHeld(): void {
    this.heldRetry = undefined;
    if (this.closed || this.heldFrom === 0) return;
    // Not a frame built for nothing while the bus is still behind (each copies its message).
    const first = this.outbound.firstFrom(this.heldFrom);
    if (first && this.options.publisher.wouldHoldBack(first.utf8.length)) {
      this.holdFrom(this.heldFrom);
      return;
    }
    const now = Date.now();
    const held = this.outbound.resendFrom(this.heldFrom, now);
    this.heldFrom = 0;
    this.sendFrom(held, "held");
  }

  private deliver(frame: ServerFrame): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    // A worker that lost the session to one with a later epoch reaches its clients no more.
    if (frame.epoch < this.epoch) return;
    this.epoch = frame.epoch;
    // Acknowledgements travel with any frame of the session, to whichever connection it goes.
    for (const ack of frame.acks) if (ack.connectionId === this.connectionId) this.acknowledged(ack.seq);
    if (frame.connectionId && frame.connectionId !== this.connectionId) return;
    if (frame.connectionId && (frame.ackSeq > 0n || frame.resend)) {
      this.acknowledged(frame.ackSeq);
      if (frame.resend) this.resend("asked");
    }
    if (frame.json) {
      if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.ws.close(1008, "client does not read its events");
        return;
      }
      this.send(frame.json);
    }
    if (frame.close) this.ws.close(frame.closeCode || 1000, reasonText(frame.closeReason));
  }

  private acknowledged(seq: bigint): void {
    const before = this.outbound.ackedSeq;
    this.outbound.acknowledge(Number(seq));
    if (this.outbound.ackedSeq > before) this.pacing.acknowledged();
  }

  private checkAlive(): void {
    if (this.awaitingPong) {
      this.ws.terminate();
      return;
    }
    this.awaitingPong = true;
    this.ws.ping();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbound.clear();
    clearInterval(this.heartbeat);
    clearInterval(this.ping);
    clearTimeout(this.endTimer);
    clearTimeout(this.heldRetry);
    this.relay(ConnectionKind.CLOSED);
    void this.subscription?.unsubscribe();
  }

  /** A socket frame (OPENED, HEARTBEAT, CLOSED) to the worker: small, and not held back by a backlog. */
  private relay(connection: ConnectionKind): void {
    this.publish(this.socketFrame(connection), { control: true });
  }

  private socketFrame(connection: ConnectionKind): Uint8Array {
    return this.frame({
      connection,
      // The last message sent: asking for the ones held back would only bring them back held.
      seq: BigInt(this.heldFrom === 0 ? this.outbound.lastSeq : this.heldFrom - 1),
      ackedSeq: BigInt(this.outbound.ackedSeq),
    });
  }

  private messageFrame(seq: number, utf8: Uint8Array): Uint8Array {
    return messageFrame(this.sessionId, this.connectionId, utf8, { seq, ackedSeq: this.outbound.ackedSeq });
  }

  /**
   * Publishes a frame to the worker at the end of the turn (the publisher), unless the bus would refuse
   * it (closed, or the frame too large) or is backlogged. One the bus refuses later (it closed in
   * between) stays unacknowledged, and is sent again as any lost message is.
   */
  private publish(frame: Uint8Array, options?: { control?: boolean }): PublishOutcome {
    return this.options.publisher.publish(realtimeSubjects.clientFrames(this.sessionId), frame, options);
  }

  private frame(fields: MessageInitShape<typeof ClientFrameSchema>): Uint8Array {
    const frame: ClientFrame = create(ClientFrameSchema, {
      ...fields,
      sessionId: this.sessionId,
      connectionId: this.connectionId,
    });
    return toBinary(ClientFrameSchema, frame);
  }

  /** A text message to the client, in the same write as the others of this turn. */
  private send(text: string): void {
    this.holdWrites?.();
    this.ws.send(text);
  }

  /** An event from the gateway itself, in the session's envelope. */
  private sendOwnEvent(type: string, message: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.send(
      JSON.stringify({
        type: "error",
        event_id: crypto.randomUUID(),
        source_event_id: null,
        session_id: this.sessionId,
        error: { type, message },
      }),
    );
  }
}

function reasonText(reason: string): string {
  const bytes = Buffer.from(reason, "utf8");
  return bytes.length <= MAX_REASON_BYTES ? reason : bytes.subarray(0, MAX_REASON_BYTES).toString("utf8");
}
