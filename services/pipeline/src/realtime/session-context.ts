import { type SessionConfig, SessionSource } from "@avatar/contracts/common";
import type { Session, SessionEndReason } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import type { Clock } from "./clock.js";
import { type ServerFrames, serverEventJson } from "./frames.js";
import type { ServerEventInput, SessionContext } from "./mode.js";
import type { TranscriptWriter } from "./transcript-writer.js";
import { VISITOR_ERROR, VISITOR_WARNING } from "./visitor-messages.js";

export interface ContextParts {
  session: () => Session;
  config: SessionConfig;
  log: Logger;
  clock: Clock;
  out: ServerFrames;
  transcript: TranscriptWriter;
  /** False once the session is over: a mode sends nothing after its stop. */
  open: () => boolean;
  startedAt: () => number;
  end: (reason: SessionEndReason) => Promise<void>;
}

/** What a mode handler sees of its session (realtime/mode.ts), built by the runner. */
export function sessionContext(p: ContextParts): SessionContext {
  const sessionId = p.session().id;
  const send = (event: ServerEventInput, connectionId?: string) => {
    if (p.open()) p.out.send(serverEventJson(sessionId, event), connectionId);
  };
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
    end: (reason) => p.end(reason),
    now: () => p.clock.now(),
    sinceStart: () => Math.max(0, p.clock.now() - p.startedAt()),
  };
}
