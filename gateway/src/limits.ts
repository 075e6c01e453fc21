/** Requests per second per credential (the interface's Limits section). */
export const LIMIT_DEFAULT = 10;
/** Start, stop and keep-alive, per session token. */
export const LIMIT_SESSION_LIFECYCLE = 5;
