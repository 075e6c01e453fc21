import type { SessionConfig } from "@avatar/contracts/common";
import type { Session, SessionEndReason, TranscriptEntry } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import type { AvatarOutput } from "../media/avatar-output.js";
import type { TurnMetrics } from "./turn-metrics.js";

/**
 * The seam between a session's runner (connections, bus, lifecycle: realtime/session-runner.ts) and what
 * a session does with its events (LITE: lite/, FULL: full/). A runner owns exactly one ModeHandler.
 */

/** A client event after envelope validation: `type` known, the payload is the rest of the object. */
export interface ClientEvent {
  type: string;
  /** The client's event_id, if it sent one. */
  eventId: string | null;
  /** The whole message as the client sent it. */
  payload: Record<string, unknown>;
  /** The socket it came from. */
  connectionId: string;
}

/** A server event before the runner adds event_id (fresh UUID) and session_id. */
export interface ServerEventInput {
  type: string;
  /** The client event this answers, or null. */
  sourceEventId?: string | null;
  [field: string]: unknown;
}

export interface SessionContext {
  readonly sessionId: string;
  readonly spaceId: string;
  readonly session: Session;
  readonly config: SessionConfig;
  readonly log: Logger;
  /** The avatar's voice, as its media stream plays it (the renderer animates the avatar from it). */
  readonly avatar: AvatarOutput;
  /** Sends an event to every connection of the session (or one, when connectionId is given). */
  send(event: ServerEventInput, connectionId?: string): void;
  /** `error {error: {type, message}}` to the client; the session goes on. */
  sendError(type: string, message: string, sourceEventId?: string | null, connectionId?: string): void;
  /** `warning {warning: {type, message}}` to the client. */
  sendWarning(type: string, message: string, sourceEventId?: string | null): void;
  /** Writes transcript entries through the sessions service (idempotent by entry_id, retried). */
  appendTranscript(entries: Omit<TranscriptEntry, "$typeName" | "$unknown">[]): void;
  /**
   * Per-turn latency: modes begin a turn and mark its stages; the media code reports rendered frames
   * with `turnMetrics.videoFrame(frame)` (realtime/turn-metrics.ts).
   */
  readonly turnMetrics: TurnMetrics;
  /** Asks the sessions service to end the session (e.g. AGENT_HANG_UP); the runner then stops the mode. */
  end(reason: SessionEndReason): Promise<void>;
  /** Milliseconds since the Unix epoch (injectable clock). */
  now(): number;
  /** Milliseconds since the session started (transcript relative timestamps). */
  sinceStart(): number;
}

export interface ModeHandler {
  /** Event types this mode accepts (besides the common ones the runner handles itself). */
  readonly accepts: ReadonlySet<string>;
  /** The first client connected (FULL speaks its opening text here). Called again after a reconnect. */
  onConnected(connectionId: string, firstTime: boolean): void;
  handle(event: ClientEvent): void;
  /** The session ended or the worker stops: release providers and timers; send nothing after this. */
  stop(): Promise<void>;
}

export type ModeFactory = (ctx: SessionContext) => ModeHandler | Promise<ModeHandler>;
