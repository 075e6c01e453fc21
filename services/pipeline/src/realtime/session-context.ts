import { type SessionConfig, SessionMode, SessionSource } from "@avatar/contracts/common";
import type { Session, SessionEndReason, SessionEvent } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { AvatarOutput } from "../media/avatar-output.js";
import type { Clock } from "./clock.js";
import { type ServerFrames, serverEventJson } from "./frames.js";
import type { Resumption, ServerEventInput, SessionContext } from "./mode.js";
import type { TranscriptWriter } from "./transcript-writer.js";
import { TurnMetrics } from "./turn-metrics.js";
import { VISITOR_ERROR, VISITOR_WARNING } from "./visitor-messages.js";

export interface ContextParts {
  session: () => Session;
  config: SessionConfig;
  log: Logger;
  avatar: AvatarOutput;
  clock: Clock;
  out: ServerFrames;
  transcript: TranscriptWriter;
  /** Stores notices among the session's events (turn metrics). */
  events: { write(events: StoredEvent[]): void };
  /** False once the session is over: a mode sends nothing after its stop. */
  open: () => boolean;
  startedAt: () => number;
  end: (reason: SessionEndReason) => Promise<void>;
  resumed?: Resumption;
}

export type StoredEvent = Pick<SessionEvent, "id" | "type" | "payload" | "createdAt">;

/** What a mode handler sees of its session (realtime/mode.ts), built by the runner. */
export function sessionContext(p: ContextParts): SessionContext {
  const sessionId = p.session().id;
  const send = (event: ServerEventInput, connectionId?: string) => {
    if (p.open()) p.out.send(serverEventJson(sessionId, event), connectionId);
  };
  const turnMetrics = new TurnMetrics({
    mode: p.config.mode === SessionMode.LITE ? "LITE" : "FULL",
    now: () => p.clock.now(),
    send,
    store: ({ id, type, payload }) =>
      p.events.write([{ id, type, payload, createdAt: timestampFromMs(p.clock.now()) }]),
  });
  // An embed's visitor is not the operator: notices reach them in visitor words (visitor-messages.ts).
  const forVisitor = p.session().source === SessionSource.EMBED;
  const visible = (kind: "error" | "warning", type: string, message: string) => {
    if (!forVisitor) return message;
    p.log.info("notice told to the embed's visitor in visitor words", { kind, type, message });
    return kind === "error" ? VISITOR_ERROR : VISITOR_WARNING;
  };
  return {
    sessionId,
    spaceId: p.session().spaceId,
    get session() {
      return p.session();
    },
    config: p.config,
    log: p.log,
    avatar: p.avatar,
    ...(p.resumed ? { resumed: p.resumed } : {}),
    send,
    sendError: (type, message, sourceEventId, connectionId) =>
      send(
        {
          type: "error",
          sourceEventId: sourceEventId ?? null,
          error: { type, message: visible("error", type, message) },
        },
        connectionId,
      ),
    sendWarning: (type, message, sourceEventId) =>
      send({
        type: "warning",
        sourceEventId: sourceEventId ?? null,
        warning: { type, message: visible("warning", type, message) },
      }),
    appendTranscript: (entries) => p.transcript.write(entries),
    turnMetrics,
    end: (reason) => p.end(reason),
    now: () => p.clock.now(),
    sinceStart: () => Math.max(0, p.clock.now() - p.startedAt()),
  };
}
