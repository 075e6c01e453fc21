import type { Session } from "@avatar/contracts/sessions";
import type { Clients } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import { HttpError, toHttpError } from "../http/http-error.js";

/**
 * Exchanges the ws_url ticket for its session (once). Unknown, used or expired: 401; the session has
 * ended: 409; anything else as the services' errors map.
 */
export async function redeemTicket(sessions: Clients["sessions"], ticket: string): Promise<Session> {
  if (!ticket) throw new HttpError(401, "A connect ticket is required (the ws_url of the session's start)");
  try {
    const { session } = await sessions.redeemConnectTicket({ ticket });
    if (!session) throw new HttpError(500, "Internal server error");
    return session;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
      throw new HttpError(401, "Invalid, used or expired connect ticket");
    }
    if (err instanceof ConnectError && err.code === Code.FailedPrecondition) {
      throw new HttpError(409, "Session has ended");
    }
    throw toHttpError(err);
  }
}
