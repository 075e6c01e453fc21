/** Client event types of contract section 6, by mode. */

/** Handled by the session runner in both modes. */
export const COMMON_CLIENT_EVENTS: ReadonlySet<string> = new Set(["session.keep_alive"]);

export const LITE_CLIENT_EVENTS: ReadonlySet<string> = new Set([
  "agent.speak",
  "agent.speak_end",
  "agent.interrupt",
  "agent.start_listening",
  "agent.stop_listening",
  "vendorA_agent_command",
]);

export const FULL_CLIENT_EVENTS: ReadonlySet<string> = new Set([
  "avatar.repeat",
  "avatar.speak_text",
  "avatar.say",
  "avatar.speak_response",
  "avatar.interrupt",
  "avatar.start_listening",
  "avatar.stop_listening",
  "user.start_push_to_talk",
  "user.stop_push_to_talk",
  "user.audio",
]);
