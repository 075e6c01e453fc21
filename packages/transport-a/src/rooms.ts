import { RoomServiceClient, TwirpError } from "livekit-server-sdk";
import { httpUrl, type TransportAConfig } from "./settings.js";

/** The transportA server could not be reached, timed out or failed (5xx): try again later. */
export class TransportAUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportAUnavailableError";
  }
}

/** The server refused the call (4xx other than not found): the deployment's key or secret is wrong. */
export class TransportARefusedError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "TransportARefusedError";
  }
}

export interface RoomInfo {
  name: string;
  sid: string;
  emptyTimeout: number;
  departureTimeout: number;
  numParticipants: number;
  metadata: string;
}

export interface RoomOptions {
  /** Seconds the room stays open while nobody has joined yet. */
  emptyTimeoutSeconds: number;
  /** Seconds the room stays open after its last participant left. */
  departureTimeoutSeconds: number;
  metadata?: string;
}

/**
 * Rooms on the transportA server through its server API (Twirp `livekit.RoomService`), with the server
 * SDK's RoomServiceClient. Every failure comes out as one of the two errors above, with a message that
 * names the call and never a credential.
 */
export class TransportARooms {
  private readonly client: RoomServiceClient;

  constructor(config: TransportAConfig, options: { requestTimeoutSeconds?: number } = {}) {
    this.client = new RoomServiceClient(httpUrl(config.url), config.apiKey, config.apiSecret, {
      requestTimeout: options.requestTimeoutSeconds ?? 5,
      // Region failover only applies to transportA's cloud; a self-hosted server has one address.
      failover: false,
    });
  }

  /** Creates the room, or answers the existing one of that name (the server's CreateRoom is idempotent). */
  async create(name: string, options: RoomOptions): Promise<RoomInfo> {
    const room = await this.call("CreateRoom", () =>
      this.client.createRoom({
        name,
        emptyTimeout: options.emptyTimeoutSeconds,
        departureTimeout: options.departureTimeoutSeconds,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      }),
    );
    return roomInfo(room);
  }

  /** Deletes the room; answers false when there was none (already gone: closed by its timeouts). */
  async delete(name: string): Promise<boolean> {
    try {
      await this.call("DeleteRoom", () => this.client.deleteRoom(name));
      return true;
    } catch (err) {
      if (err instanceof TransportARefusedError && (err.status === 404 || err.code === "not_found")) {
        return false;
      }
      throw err;
    }
  }

  /** Rooms open now; only those of `names` when given. */
  async list(names?: string[]): Promise<RoomInfo[]> {
    const rooms = await this.call("ListRooms", () => this.client.listRooms(names));
    return rooms.map(roomInfo);
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw classify(what, err);
    }
  }
}

function classify(what: string, err: unknown): Error {
  if (err instanceof TwirpError) {
    const detail = `${err.status}${err.code ? ` ${err.code}` : ""}: ${err.message}`;
    if (err.status >= 500) return new TransportAUnavailableError(`transportA ${what} failed (${detail})`);
    return new TransportARefusedError(`transportA refused ${what} (${detail})`, err.status, err.code);
  }
  const reason = err instanceof Error ? describeNetworkError(err) : String(err);
  return new TransportAUnavailableError(`transportA ${what} failed: ${reason}`, { cause: err });
}

/** fetch's "fetch failed" says little; its cause names the socket error (ECONNREFUSED, a timeout...). */
function describeNetworkError(err: Error): string {
  if (err.name === "TimeoutError" || err.name === "AbortError") return "no answer in time";
  const cause = err.cause as { code?: string; message?: string } | undefined;
  if (cause?.code) return `${err.message} (${cause.code})`;
  return cause?.message ? `${err.message} (${cause.message})` : err.message;
}

/** The fields of the SDK's Room this service reads (the Room message carries many more). */
function roomInfo(room: RoomInfo): RoomInfo {
  return {
    name: room.name,
    sid: room.sid,
    emptyTimeout: room.emptyTimeout,
    departureTimeout: room.departureTimeout,
    numParticipants: room.numParticipants,
    metadata: room.metadata,
  };
}
