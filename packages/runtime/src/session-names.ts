import { SessionMode, SessionSource } from "@avatar/contracts/common";
import { SessionState } from "@avatar/contracts/sessions";

/** Wire names of a session's mode, source and state, as the public API and webhooks show them. */

export const sessionModeName: Record<SessionMode, "FULL" | "LITE"> = {
  [SessionMode.UNSPECIFIED]: "FULL",
  [SessionMode.FULL]: "FULL",
  [SessionMode.LITE]: "LITE",
};

export const sessionSourceName: Record<SessionSource, string> = {
  [SessionSource.UNSPECIFIED]: "API",
  [SessionSource.API]: "API",
  [SessionSource.EMBED]: "EMBED",
  [SessionSource.DEMO]: "DEMO",
};

export const sessionStateName: Record<SessionState, string> = {
  [SessionState.UNSPECIFIED]: "CREATED",
  [SessionState.CREATED]: "CREATED",
  [SessionState.STARTED]: "STARTED",
  [SessionState.ENDED]: "ENDED",
};
