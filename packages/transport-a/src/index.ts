/**
 * transportA (a LiveKit-compatible SFU) on the server side: settings, session rooms, tokens and where a
 * session's media goes. The publisher, which loads transportA's native WebRTC library, is the separate
 * entry point `@avatar/transport-a/publisher`.
 */
export { type TransportADestination, transportADestination } from "./destination.js";
export { grantFor, type TransportARole } from "./grants.js";
export {
  AGENT_IDENTITY,
  AVATAR_IDENTITY,
  PUBLISH_ON_BEHALF_ATTRIBUTE,
  roomForSession,
} from "./names.js";
export {
  type RoomInfo,
  type RoomOptions,
  TransportARefusedError,
  TransportARooms,
  TransportAUnavailableError,
} from "./rooms.js";
export {
  ROOM_DEPARTURE_TIMEOUT_SECONDS,
  ROOM_EMPTY_TIMEOUT_SECONDS,
  type SessionRoomAccess,
  TransportAServer,
} from "./server.js";
export {
  httpUrl,
  readTransportAConfig,
  type TransportAConfig,
  transportAConfig,
  transportASettings,
  webSocketUrl,
} from "./settings.js";
export { type TokenRequest, TransportATokens } from "./tokens.js";
