import { COMMON_CLIENT_EVENTS, FULL_CLIENT_EVENTS, LITE_CLIENT_EVENTS } from "./event-types.js";

/**
 * The envelope check every client message passes before any mode sees it (contract section 6): a JSON
 * object with a string `type` (or `event_type`) this session accepts. A refusal names the problem; the
 * runner answers it with an `error` event and the session goes on.
 */

export type Envelope =
  | { ok: true; type: string; eventId: string | null; payload: Record<string, unknown> }
  | { ok: false; errorType: string; message: string; eventId: string | null };

export interface EnvelopeRules {
  /** "LITE" or "FULL": which mode's events this session takes. */
  mode: "LITE" | "FULL";
  /** Every type the session's mode handler accepts. */
  accepts: ReadonlySet<string>;
}

const MAX_SHOWN = 64;
const shown = (text: string) => (text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text);

export function readEnvelope(text: string, rules: EnvelopeRules): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : "not JSON";
    return {
      ok: false,
      errorType: "invalid_json",
      message: `message is not valid JSON: ${detail}`,
      eventId: null,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const kind = Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
    return {
      ok: false,
      errorType: "invalid_message",
      message: `message must be a JSON object, got ${kind}`,
      eventId: null,
    };
  }
  const payload = value as Record<string, unknown>;
  const eventId = typeof payload.event_id === "string" && payload.event_id !== "" ? payload.event_id : null;
  const type = payload.type ?? payload.event_type;
  if (type === undefined || type === null) {
    return {
      ok: false,
      errorType: "invalid_message",
      message: "message has no type (or event_type)",
      eventId,
    };
  }
  if (typeof type !== "string" || type === "") {
    return { ok: false, errorType: "invalid_message", message: "type must be a non-empty string", eventId };
  }
  if (COMMON_CLIENT_EVENTS.has(type) || rules.accepts.has(type)) return { ok: true, type, eventId, payload };
  const other = rules.mode === "LITE" ? FULL_CLIENT_EVENTS : LITE_CLIENT_EVENTS;
  if (other.has(type)) {
    const otherMode = rules.mode === "LITE" ? "FULL" : "LITE";
    return {
      ok: false,
      errorType: "wrong_mode",
      message: `${type} is a ${otherMode} mode event; this session runs in ${rules.mode} mode`,
      eventId,
    };
  }
  return { ok: false, errorType: "unknown_event", message: `unknown event type "${shown(type)}"`, eventId };
}
