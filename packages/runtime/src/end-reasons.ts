import { SessionEndReason } from "@avatar/contracts/sessions";

/** The wire names of the end reasons (SessionEndReasonEnum), in the contract's order. */
export const END_REASONS = [
  "UNKNOWN",
  "USER_DISCONNECTED",
  "SERVER_ERROR",
  "IDLE_TIMEOUT",
  "NO_CREDITS",
  "USER_CLOSED",
  "AVATAR_DELETED",
  "MAX_DURATION_REACHED",
  "ZOMBIE_SESSION_REAP",
  "AGENT_HANG_UP",
] as const satisfies readonly (keyof typeof SessionEndReason)[];

export type EndReasonName = (typeof END_REASONS)[number];

export const endReasonToProto = (name: EndReasonName): SessionEndReason => SessionEndReason[name];

/** The wire name of a proto end reason; undefined for UNSPECIFIED or a number this build does not know. */
export function endReasonFromProto(reason: SessionEndReason): EndReasonName | undefined {
  const name = SessionEndReason[reason] as string | undefined;
  return (END_REASONS as readonly string[]).includes(name ?? "") ? (name as EndReasonName) : undefined;
}
