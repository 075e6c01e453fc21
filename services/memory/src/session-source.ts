import { SessionMode } from "@avatar/contracts/common";
import {
  type GetSessionResponse,
  type GetTranscriptResponse,
  type Session,
  SessionState,
  type TranscriptEntry,
} from "@avatar/contracts/sessions";
import { invalidRequest, isUuid, notFound } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/** What the memory service reads from the sessions service (a Connect client satisfies it). */
export interface SessionsReader {
  getSession(request: { spaceId: string; sessionId: string }): Promise<GetSessionResponse>;
  getTranscript(request: {
    spaceId: string;
    sessionId: string;
    startTimestamp?: bigint;
  }): Promise<GetTranscriptResponse>;
}

/** Pages of a transcript read before giving up (a guard against a peer whose cursor never advances). */
const MAX_TRANSCRIPT_PAGES = 1_000;

/** The session of the space; a missing one, or one of another space, is a 404 naming `field`. */
export async function getSpaceSession(
  sessions: SessionsReader,
  spaceId: string,
  sessionId: string,
  field: string,
): Promise<Session> {
  const missing = () => notFound("Session not found", { field });
  if (!isUuid(sessionId)) throw missing();
  try {
    const { session } = await sessions.getSession({ spaceId, sessionId });
    if (!session || session.spaceId.toLowerCase() !== spaceId.toLowerCase()) throw missing();
    return session;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) throw missing();
    throw err;
  }
}

/** A memory is made only of ended FULL sessions (400 otherwise). */
export function checkSessionUsable(session: Session, field: string): void {
  if (session.state !== SessionState.ENDED) {
    throw invalidRequest(
      `Session ${session.id} has not ended; a memory can be made only from an ended session`,
      {
        field,
      },
    );
  }
  if (session.mode !== SessionMode.FULL) {
    throw invalidRequest(
      `Session ${session.id} is not a FULL session; a memory can be made only from FULL sessions`,
      {
        field,
      },
    );
  }
}

/** Every transcript entry of the session, oldest first, following next_timestamp page by page. */
export async function readTranscript(
  sessions: SessionsReader,
  spaceId: string,
  sessionId: string,
): Promise<TranscriptEntry[]> {
  const seen = new Set<string>();
  const entries: TranscriptEntry[] = [];
  let start: bigint | undefined;
  for (let page = 0; page < MAX_TRANSCRIPT_PAGES; page++) {
    const res = await sessions.getTranscript(
      start === undefined ? { spaceId, sessionId } : { spaceId, sessionId, startTimestamp: start },
    );
    let fresh = 0;
    for (const entry of res.entries) {
      const key = entry.entryId || `${entry.absoluteTimestamp}\u0000${entry.role}\u0000${entry.transcript}`;
      if (seen.has(key)) continue;
      seen.add(key);
      entries.push(entry);
      fresh++;
    }
    if (fresh === 0 || (start !== undefined && res.nextTimestamp <= start)) break;
    start = res.nextTimestamp;
  }
  return entries.sort((a, b) =>
    a.absoluteTimestamp < b.absoluteTimestamp ? -1 : a.absoluteTimestamp > b.absoluteTimestamp ? 1 : 0,
  );
}
