import type { CreateSessionRequestSchema } from "@avatar/contracts/sessions";
import { batchedCall, type Clients } from "@avatar/runtime";
import type { MessageInitShape } from "@bufbuild/protobuf";

export type NewSessionRequest = MessageInitShape<typeof CreateSessionRequestSchema>;

/** How a mint creates its session record. */
export type CreateSession = (req: NewSessionRequest) => Promise<unknown>;

/**
 * The sessions the mints of one turn of the event loop ask for go to the sessions service in one
 * CreateSessionsBatch call (runtime batched-call.ts): under load one call for several mints, where each
 * call costs both sides their HTTP and Connect handling; alone, a creation waits only for the end of its
 * turn. Each creation fails on its own, as CreateSession would have failed; a sessions service that does
 * not know the batch call yet (a rolling deploy) gets one CreateSession per creation.
 */
export function batchedSessionCreation(
  sessions: Pick<Clients["sessions"], "createSession" | "createSessionsBatch">,
): CreateSession {
  return batchedCall({
    many: async (items: NewSessionRequest[]) =>
      (await sessions.createSessionsBatch({ sessions: items })).outcomes,
    valueOf: (outcome) => outcome.sessionId || undefined,
    one: async (item: NewSessionRequest) => (await sessions.createSession(item)).session?.id ?? "",
  });
}
