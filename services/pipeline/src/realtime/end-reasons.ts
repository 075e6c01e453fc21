import { SessionEndReason } from "@avatar/contracts/sessions";

/** The wire name of an end reason (`session.stopped {end_reason}`); UNKNOWN for an unspecified one. */
export function endReasonName(reason: SessionEndReason): string {
  if (reason === SessionEndReason.UNSPECIFIED) return "UNKNOWN";
  return SessionEndReason[reason] ?? "UNKNOWN";
}
