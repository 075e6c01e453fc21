import { AGENT_IDENTITY, AVATAR_IDENTITY, PUBLISH_ON_BEHALF_ATTRIBUTE, viewerIdentity } from "./names.js";
import { type RoomInfo, TransportARooms } from "./rooms.js";
import type { TransportAConfig } from "./settings.js";
import { TransportATokens } from "./tokens.js";

/** What start answers for a session room: the server's public URL and tokens for its participants. */
export interface SessionRoomAccess {
  url: string;
  /** A viewer: subscribes to the avatar's tracks, publishes nothing. */
  clientToken: string;
  /** LITE only: the caller's agent joins with it and publishes its audio and data. */
  agentToken?: string;
}

/** Seconds a session room waits for its first participant, and stays after its last one left. */
export const ROOM_EMPTY_TIMEOUT_SECONDS = 300;
export const ROOM_DEPARTURE_TIMEOUT_SECONDS = 60;

/**
 * The deployment's transportA server as the services use it: session rooms (opened when a session
 * starts, closed when it ends) and the tokens of the people and processes that join them.
 */
export class TransportAServer {
  readonly rooms: TransportARooms;
  readonly tokens: TransportATokens;

  constructor(
    readonly config: TransportAConfig,
    options: { now: () => Date; requestTimeoutSeconds?: number },
  ) {
    this.rooms = new TransportARooms(config, options);
    this.tokens = new TransportATokens(config, options.now);
  }

  openSessionRoom(room: string, sessionId: string): Promise<RoomInfo> {
    return this.rooms.create(room, {
      emptyTimeoutSeconds: ROOM_EMPTY_TIMEOUT_SECONDS,
      departureTimeoutSeconds: ROOM_DEPARTURE_TIMEOUT_SECONDS,
      metadata: JSON.stringify({ session_id: sessionId }),
    });
  }

  closeSessionRoom(room: string): Promise<boolean> {
    return this.rooms.delete(room);
  }

  /** The start answer's access to a session room, valid for `ttlSeconds`. */
  async access(room: string, options: { lite: boolean; ttlSeconds: number }): Promise<SessionRoomAccess> {
    const clientToken = await this.tokens.mint({
      role: "viewer",
      room,
      identity: viewerIdentity(),
      ttlSeconds: options.ttlSeconds,
    });
    if (!options.lite) return { url: this.config.publicUrl, clientToken };
    const agentToken = await this.tokens.mint({
      role: "agent",
      room,
      identity: AGENT_IDENTITY,
      kind: "agent",
      ttlSeconds: options.ttlSeconds,
    });
    return { url: this.config.publicUrl, clientToken, agentToken };
  }

  /**
   * The pipeline worker's token: it joins as the avatar and publishes its video and voice. In a LITE
   * room it publishes on behalf of the caller's agent; in a FULL room the avatar is the agent.
   */
  avatarToken(room: string, options: { lite: boolean; ttlSeconds: number }): Promise<string> {
    return this.tokens.mint({
      role: "avatar",
      room,
      identity: AVATAR_IDENTITY,
      name: "Avatar",
      kind: "agent",
      ttlSeconds: options.ttlSeconds,
      ...(options.lite ? { attributes: { [PUBLISH_ON_BEHALF_ATTRIBUTE]: AGENT_IDENTITY } } : {}),
    });
  }
}
