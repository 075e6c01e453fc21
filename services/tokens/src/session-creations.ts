import { type CreateSessionRequest, CreateSessionRequestSchema } from "@avatar/contracts/sessions";
import { type Clients, connectErrorOf, type Pending, TurnBatch } from "@avatar/runtime";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

export type NewSessionRequest = MessageInitShape<typeof CreateSessionRequestSchema>;

/** How a mint creates its session record. */
export type CreateSession = (req: NewSessionRequest) => Promise<void>;

/** Most creations per call (the sessions service takes up to 256). */
const MAX_PER_CALL = 64;

/**
 * The sessions the mints of one turn of the event loop ask for go to the sessions service in one
 * CreateSessionsBatch call: under load one call for several mints, where each call costs both sides
 * their HTTP and Connect handling; alone, a mint's creation waits only for the end of its turn. Each
 * creation fails on its own, with the error CreateSession would have given. A sessions service that does
 * not know the batch call yet (a rolling deploy) gets one CreateSession per creation.
 */
export function batchedSessionCreation(
  sessions: Pick<Clients["sessions"], "createSession" | "createSessionsBatch">,
): CreateSession {
  const batch = new TurnBatch<CreateSessionRequest, void>(
    async (waiting: Pending<CreateSessionRequest, void>[]) => {
      try {
        const { outcomes } = await sessions.createSessionsBatch({ sessions: waiting.map((w) => w.item) });
        waiting.forEach((w, i) => {
          const outcome = outcomes[i];
          if (!outcome) w.reject(new ConnectError("no outcome for this session", Code.Internal));
          else if (outcome.error) w.reject(connectErrorOf(outcome.error));
          else w.resolve();
        });
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Unimplemented) throw err;
        await Promise.all(
          waiting.map((w) => sessions.createSession(w.item).then(() => w.resolve(), w.reject)),
        );
      }
    },
    { maxItems: MAX_PER_CALL },
  );
  return (req) => batch.add(create(CreateSessionRequestSchema, req));
}
