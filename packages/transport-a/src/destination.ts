import { type SessionConfig, SessionMode } from "@avatar/contracts/common";
import { roomForSession } from "./names.js";

/**
 * Where a session's media goes on transportA (contract section 7):
 * - `session-room`: the deployment's server, the session's own room (FULL, and LITE without
 *   `transportA_config`), when the deployment has a transportA server;
 * - `caller-room`: a LITE session's `transportA_config`: the caller's server, room and token, whether
 *   or not the deployment has a server of its own.
 * Nothing (undefined): the media goes out over WHEP only.
 */
export type TransportADestination =
  | { kind: "session-room"; room: string; lite: boolean }
  | { kind: "caller-room"; url: string; room: string; token: string };

export function transportADestination(
  sessionId: string,
  config: SessionConfig,
  deploymentHasServer: boolean,
): TransportADestination | undefined {
  const lite = config.mode === SessionMode.LITE;
  const caller = lite ? config.lite?.transportA : undefined;
  if (caller) {
    return {
      kind: "caller-room",
      url: caller.transportAUrl,
      room: caller.transportARoom,
      token: caller.transportAClientToken,
    };
  }
  // A transportB session never reaches here: the tokens service refuses transportB_config.
  if (!deploymentHasServer) return undefined;
  return { kind: "session-room", room: roomForSession(sessionId), lite };
}
