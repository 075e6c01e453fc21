import { TrackSource, type VideoGrant } from "livekit-server-sdk";

/**
 * What each participant this service issues a token for may do in a session's room. The avatar and a
 * LITE caller's agent publish only the sources they need; a viewer only subscribes.
 */
export type TransportARole = "viewer" | "agent" | "avatar";

export function grantFor(role: TransportARole, room: string): VideoGrant {
  switch (role) {
    case "viewer":
      return { roomJoin: true, room, canSubscribe: true, canPublish: false, canPublishData: false };
    case "agent":
      // The caller's agent speaks into the room (its microphone) and may send data; it hears the room.
      return {
        roomJoin: true,
        room,
        canSubscribe: true,
        canPublish: true,
        canPublishSources: [TrackSource.MICROPHONE],
        canPublishData: true,
      };
    case "avatar":
      // The worker publishes the avatar's video and voice and listens to nobody (LITE audio arrives
      // over the event socket).
      return {
        roomJoin: true,
        room,
        canSubscribe: false,
        canPublish: true,
        canPublishSources: [TrackSource.CAMERA, TrackSource.MICROPHONE],
        canPublishData: false,
      };
  }
}
