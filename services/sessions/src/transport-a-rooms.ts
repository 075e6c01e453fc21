import type { Bus, Subscription } from "@avatar/bus";
import type { SessionConfig } from "@avatar/contracts/common";
import type { SessionEnded } from "@avatar/contracts/sessions";
import { consumeEvent, type Logger, topics, unavailable } from "@avatar/runtime";
import {
  type SessionRoomAccess,
  TransportARefusedError,
  type TransportAServer,
  transportADestination,
} from "@avatar/transport-a";
import type { Kysely } from "kysely";
import { readConfig } from "./lifecycle.js";
import * as repo from "./repository.js";
import type { SessionRow, SessionsDatabase } from "./schema.js";

export const ROOMS_CONSUMER = "sessions-transport-a";

/** Tokens stay valid this long past the session's latest possible end (clock skew, a late reconnect). */
const TOKEN_GRACE_SECONDS = 60;

/**
 * The session rooms on the deployment's transportA server (contract section 7). A FULL session and a
 * LITE session without `transportA_config` get one: opened before the start completes, its access
 * answered by every start, closed when the session ends. A LITE session with `transportA_config` is
 * published into the caller's room by its worker; nothing here is needed for it.
 */
export class SessionRooms {
  constructor(
    private readonly server: TransportAServer,
    private readonly db: Kysely<SessionsDatabase>,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  private roomOf(sessionId: string, config: SessionConfig) {
    const destination = transportADestination(sessionId, config, true);
    return destination?.kind === "session-room" ? destination : undefined;
  }

  /**
   * The step before a start completes: the room must exist before the worker joins it and before
   * anyone is told to. A server that cannot create it fails the start with 503 and a message saying
   * so (the escrow goes back; starting again may work).
   */
  async open(row: SessionRow): Promise<void> {
    const room = this.roomOf(row.id, readConfig(row));
    if (!room) return;
    try {
      await this.server.openSessionRoom(room.room, row.id);
    } catch (err) {
      const refused = err instanceof TransportARefusedError;
      this.log[refused ? "error" : "warn"]("could not open the session's transportA room", {
        sessionId: row.id,
        room: room.room,
        err,
      });
      throw unavailable(
        "transportA is unavailable: the session's media room could not be created; try starting again",
        { reason: "TRANSPORT_A_UNAVAILABLE" },
      );
    }
  }

  /** What a start answers: the room's URL and tokens valid until the session's latest possible end. */
  async access(row: SessionRow, config: SessionConfig): Promise<SessionRoomAccess | undefined> {
    const room = this.roomOf(row.id, config);
    if (!room) return undefined;
    const end = row.max_end_at?.getTime() ?? this.now().getTime() + row.max_session_duration * 1000;
    const ttlSeconds = Math.max(1, Math.ceil((end - this.now().getTime()) / 1000)) + TOKEN_GRACE_SECONDS;
    return this.server.access(room.room, { lite: room.lite, ttlSeconds });
  }

  /**
   * A session ended: its room goes (the worker and everyone in it are disconnected). A server that
   * cannot be reached gets the event again later; one that refuses our credentials would refuse it
   * forever, so that is logged and given up (the room's own timeouts close it).
   */
  async ended(event: SessionEnded): Promise<void> {
    const id = event.session?.id;
    const row = id ? await repo.findSession(this.db, id) : undefined;
    const room = row ? this.roomOf(row.id, readConfig(row)) : undefined;
    if (!room) return;
    try {
      const closed = await this.server.closeSessionRoom(room.room);
      this.log.debug(closed ? "session room closed" : "session room was already gone", { sessionId: id });
    } catch (err) {
      if (err instanceof TransportARefusedError) {
        this.log.error("transportA refused to close a session room", { sessionId: id, room: room.room, err });
        return;
      }
      throw err;
    }
  }

  consume(bus: Bus): Promise<Subscription> {
    return consumeEvent(bus, topics.sessionEnded, ROOMS_CONSUMER, (event) => this.ended(event));
  }
}
