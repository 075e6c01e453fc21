import { WhepResponseSchema, WhepStatus } from "@avatar/contracts/pipeline";
import { create } from "@bufbuild/protobuf";
import type { SessionMedia, SessionMediaFactory } from "./session-media.js";

/**
 * A worker without media (PIPELINE_MEDIA=off, or a session whose media could not start): the session's
 * events and transcript work as usual, nothing is rendered, and a WHEP viewer is told so (503).
 */
export function withoutMedia(why: string): SessionMedia {
  return {
    output: { speak() {}, endUtterance() {}, interrupt() {} },
    whep: async () => create(WhepResponseSchema, { status: WhepStatus.UNAVAILABLE, message: why }),
    stop: async () => {},
  };
}

export const noMedia: SessionMediaFactory = async () =>
  withoutMedia("this worker serves no media (PIPELINE_MEDIA is off)");
