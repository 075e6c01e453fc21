import { randomUUID } from "node:crypto";
import { type SessionConfig, SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import {
  type Session,
  type SessionEndReason,
  SessionSchema,
  SessionState,
  type TranscriptEntry,
} from "@avatar/contracts/sessions";
import { createLogger, type Logger } from "@avatar/runtime";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ClientEvent, ServerEventInput, SessionContext } from "../src/realtime/mode.js";
import { TurnMetrics } from "../src/realtime/turn-metrics.js";
import { RecordingOutput } from "./recording-output.js";

/**
 * A recording SessionContext for mode tests: what the session runner gives a mode, minus sockets and
 * the bus. Every server event is recorded with the time it was sent (the runner would add event_id and
 * session_id and put it on the socket); transcript entries are recorded instead of written through the
 * sessions service; `end` records the reason. Log lines are kept so tests can search them.
 */
export class RecordingSession implements SessionContext {
  readonly sessionId = randomUUID();
  readonly spaceId: string;
  readonly session: Session;
  readonly config: SessionConfig;
  readonly log: Logger;
  /** What the mode pushed to the avatar's media. */
  readonly avatar = new RecordingOutput();
  readonly logLines: string[] = [];
  readonly events: RecordedEvent[] = [];
  readonly transcript: Omit<TranscriptEntry, "$typeName" | "$unknown">[] = [];
  readonly endReasons: SessionEndReason[] = [];
  /** `session.turn_metrics` events, kept apart from `events` so that event-order tests need not list them. */
  readonly turnMetricsEvents: RecordedEvent[] = [];
  /** What the runner would store among the session's events. */
  readonly stored: { id: string; type: string; payload: unknown }[] = [];
  readonly turnMetrics = new TurnMetrics({
    mode: "FULL",
    now: () => Date.now(),
    send: (event) =>
      this.turnMetricsEvents.push({ ...event, sourceEventId: event.sourceEventId ?? null, at: Date.now() }),
    store: (event) => this.stored.push(event),
  });
  private readonly startedAt = Date.now();
  private readonly waiters: { match: (e: RecordedEvent) => boolean; resolve: (e: RecordedEvent) => void }[] =
    [];

  constructor(config: MessageInitShape<typeof SessionConfigSchema>, spaceId: string = randomUUID()) {
    this.spaceId = spaceId;
    this.config = create(SessionConfigSchema, { mode: SessionMode.FULL, language: "en", ...config });
    this.session = create(SessionSchema, {
      id: this.sessionId,
      spaceId,
      state: SessionState.STARTED,
      mode: this.config.mode,
      isSandbox: this.config.isSandbox,
    });
    this.log = createLogger({ level: "debug", sink: (line) => this.logLines.push(line) });
  }

  send(event: ServerEventInput, connectionId?: string): void {
    const recorded: RecordedEvent = {
      ...event,
      sourceEventId: event.sourceEventId ?? null,
      at: Date.now(),
      connectionId,
    };
    this.events.push(recorded);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(recorded)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(recorded);
      }
    }
  }

  sendError(type: string, message: string, sourceEventId?: string | null, connectionId?: string): void {
    this.send(
      { type: "error", sourceEventId: sourceEventId ?? null, error: { type, message } },
      connectionId,
    );
  }

  sendWarning(type: string, message: string, sourceEventId?: string | null): void {
    this.send({ type: "warning", sourceEventId: sourceEventId ?? null, warning: { type, message } });
  }

  appendTranscript(entries: Omit<TranscriptEntry, "$typeName" | "$unknown">[]): void {
    this.transcript.push(...entries);
  }

  async end(reason: SessionEndReason): Promise<void> {
    this.endReasons.push(reason);
  }

  now(): number {
    return Date.now();
  }

  sinceStart(): number {
    return Date.now() - this.startedAt;
  }

  /** The events of a type, in order. */
  ofType(type: string): RecordedEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  /** The types of all events so far, in order (optionally only those in `only`). */
  types(only?: string[]): string[] {
    return this.events.map((e) => e.type).filter((t) => !only || only.includes(t));
  }

  /** The first event (from position `from`) of this type that matches; waits for it up to `timeoutMs`. */
  waitFor(
    type: string,
    options: { from?: number; match?: (e: RecordedEvent) => boolean; timeoutMs?: number } = {},
  ): Promise<RecordedEvent> {
    const match = (e: RecordedEvent) => e.type === type && (options.match?.(e) ?? true);
    const found = this.events.slice(options.from ?? 0).find(match);
    if (found) return Promise.resolve(found);
    const timeoutMs = options.timeoutMs ?? 20_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no ${type} within ${timeoutMs} ms; events: ${this.types().join(", ")}`));
      }, timeoutMs);
      this.waiters.push({
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }
}

export type RecordedEvent = ServerEventInput & {
  sourceEventId: string | null;
  at: number;
  connectionId?: string;
};

/** A client event as the runner hands it to a mode. */
export function clientEvent(
  type: string,
  fields: Record<string, unknown> = {},
  eventId: string | null = randomUUID(),
) {
  const payload = { type, ...fields, ...(eventId ? { event_id: eventId } : {}) };
  return { type, eventId, payload, connectionId: "conn-1" } satisfies ClientEvent;
}

/** `user.audio` events for PCM, cut in chunks of `ms` milliseconds (24 kHz, 16-bit). */
export function audioEvents(pcm: Uint8Array, ms = 100): ClientEvent[] {
  const size = (24_000 * 2 * ms) / 1000;
  const out: ClientEvent[] = [];
  for (let at = 0; at < pcm.length; at += size) {
    out.push(
      clientEvent("user.audio", { audio: Buffer.from(pcm.subarray(at, at + size)).toString("base64") }),
    );
  }
  return out;
}

export function silence(ms: number): Uint8Array {
  return new Uint8Array(Math.round((24_000 * ms) / 1000) * 2);
}

export function durationMs(pcmBytes: number): number {
  return (pcmBytes / 2 / 24_000) * 1000;
}
