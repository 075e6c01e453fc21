import type { SessionConfig } from "@avatar/contracts/common";
import type { Session, SessionEndReason } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import type { AvatarOutput } from "../media/avatar-output.js";
import type { Clock } from "./clock.js";
import { type ServerFrames, serverEventJson } from "./frames.js";
import type { ServerEventInput, SessionContext } from "./mode.js";
import type { TranscriptWriter } from "./transcript-writer.js";

export interface ContextParts {
  session: () => Session;
  config: SessionConfig;
  log: Logger;
  avatar: AvatarOutput;
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
  return {
    sessionId,
    spaceId: p.session().spaceId,
    get session() {
      return p.session();
    },
    config: p.config,
    log: p.log,
    avatar: p.avatar,
    send,
    sendError: (type, message, sourceEventId, connectionId) =>
      send({ type: "error", sourceEventId: sourceEventId ?? null, error: { type, message } }, connectionId),
    sendWarning: (type, message, sourceEventId) =>
      send({ type: "warning", sourceEventId: sourceEventId ?? null, warning: { type, message } }),
    appendTranscript: (entries) => p.transcript.write(entries),
    end: (reason) => p.end(reason),
    now: () => p.clock.now(),
    sinceStart: () => Math.max(0, p.clock.now() - p.startedAt()),
  };
}
