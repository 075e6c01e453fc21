/**
 * The names this service gives things on a transportA server: one room per session, and the identities
 * of the participants it issues tokens for. Every other module takes them from here.
 */

const ROOM_PREFIX = "avatar-session-";

/** The room of a session that runs on the deployment's transportA server. */
export const roomForSession = (sessionId: string): string => `${ROOM_PREFIX}${sessionId.toLowerCase()}`;

/** The participant that publishes the avatar's video and voice (the pipeline worker). */
export const AVATAR_IDENTITY = "avatar";
/** A LITE caller's agent, which publishes its audio and data into the session's room. */
export const AGENT_IDENTITY = "agent";
/** Viewers are many: each start answer's client token has its own identity. */
export const viewerIdentity = (): string => `viewer-${crypto.randomUUID()}`;

/**
 * transportA's attribute naming the participant an avatar publishes for, so that clients built for
 * transportA's agents show the avatar's tracks as the agent's (LiveKit Agents' `lk.publish_on_behalf`).
 */
export const PUBLISH_ON_BEHALF_ATTRIBUTE = "lk.publish_on_behalf";
