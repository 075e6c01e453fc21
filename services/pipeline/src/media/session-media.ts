import type { SessionConfig } from "@avatar/contracts/common";
import type { WhepRequest, WhepResponse } from "@avatar/contracts/pipeline";
import type { Session } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import type { Clock } from "../realtime/clock.js";
import type { AvatarOutput } from "./avatar-output.js";

/** A session's media on this worker: the avatar's rendered stream, its viewers and transports. */
export interface SessionMedia {
  /** Where the session's mode sends the avatar's voice. */
  readonly output: AvatarOutput;
  /** A WHEP viewer's offer or delete, relayed by a gateway (contract section 7). */
  whep(request: WhepRequest): Promise<WhepResponse>;
  /** The session is over here: viewers end, encoders and renderer stop. */
  stop(): Promise<void>;
}

export interface SessionMediaContext {
  session: Session;
  config: SessionConfig;
  log: Logger;
  clock: Clock;
  /** Each frame as it is rendered: when it plays and how open the mouth is (per-turn latency). */
  onFrame?: (frame: { at: number; mouthOpen: number }) => void;
}

/** Makes the media of a session that starts on this worker. */
export type SessionMediaFactory = (ctx: SessionMediaContext) => Promise<SessionMedia>;
