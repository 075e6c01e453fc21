import { InteractivityType } from "@avatar/contracts/common";
import type { SessionContext } from "../realtime/mode.js";

/**
 * Push-to-talk acknowledgements. Only PUSH_TO_TALK sessions take a push; a start while a push is
 * under way, or a stop without one, fails. Each answer carries the client event's id.
 */
export class PushToTalk {
  private pushing = false;

  constructor(private readonly ctx: SessionContext) {}

  get enabled(): boolean {
    return this.ctx.config.interactivityType === InteractivityType.PUSH_TO_TALK;
  }

  get active(): boolean {
    return this.pushing;
  }

  /** True when the push started (acknowledged); false when it was refused (reported). */
  start(sourceEventId: string | null): boolean {
    const problem = !this.enabled
      ? "push-to-talk needs a session with interactivity_type PUSH_TO_TALK; this one is CONVERSATIONAL"
      : this.pushing
        ? "push-to-talk is already started"
        : undefined;
    if (problem) {
      this.ctx.send({ type: "user.push_to_talk_start_failed", sourceEventId, reason: problem });
      return false;
    }
    this.pushing = true;
    this.ctx.send({ type: "user.push_to_talk_started", sourceEventId });
    return true;
  }

  /** True when the push stopped (acknowledged); false when there was none to stop (reported). */
  stop(sourceEventId: string | null): boolean {
    const problem = !this.enabled
      ? "push-to-talk needs a session with interactivity_type PUSH_TO_TALK; this one is CONVERSATIONAL"
      : !this.pushing
        ? "push-to-talk is not started"
        : undefined;
    if (problem) {
      this.ctx.send({ type: "user.push_to_talk_stop_failed", sourceEventId, reason: problem });
      return false;
    }
    this.pushing = false;
    this.ctx.send({ type: "user.push_to_talk_stopped", sourceEventId });
    return true;
  }
}
