import {
  type GetTranscriptResponse,
  type Session,
  SessionState,
  type StartSessionResponse,
} from "@avatar/contracts/sessions";
import { endReasonFromProto, sessionModeName, sessionSourceName, sessionStateName } from "@avatar/runtime";
import { isoTime, orNull } from "./time.js";

/** Public shapes of sessions, their start answer and transcripts. */

const status = sessionStateName;
const mode = sessionModeName;
const source = sessionSourceName;

/** The session entry of get-session and the list; end_at and end_reason are null until it ends. */
export function presentSession(s: Session) {
  const ended = s.state === SessionState.ENDED;
  return {
    id: s.id,
    created_at: isoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt),
    duration: s.duration,
    source: source[s.source],
    mode: mode[s.mode],
    is_sandbox: s.isSandbox,
    credits_consumed: s.creditsConsumed,
    api_key_id: orNull(s.apiKeyId),
    status: status[s.state],
    end_at: ended ? isoTime(s.endedAt) : null,
    end_reason: ended ? (endReasonFromProto(s.endReason) ?? null) : null,
  };
}

/** 201 of a start: the socket address with its single-use ticket, plus transportA details when used. */
export function presentStart(res: StartSessionResponse, baseUrl: string) {
  const base = new URL(baseUrl);
  const ws = new URL("/v1/sessions/ws", base);
  ws.protocol = base.protocol === "https:" ? "wss:" : "ws:";
  ws.searchParams.set("ticket", res.connectTicket);
  return {
    session_id: res.session?.id ?? "",
    ws_url: ws.toString(),
    max_session_duration: res.session?.maxSessionDuration ?? 0,
    ...(res.transportAUrl
      ? {
          transportA_url: res.transportAUrl,
          transportA_client_token: orNull(res.transportAClientToken),
          transportA_agent_token: orNull(res.transportAAgentToken),
        }
      : {}),
  };
}

export function presentTranscript(res: GetTranscriptResponse) {
  return {
    session_active: res.sessionActive,
    transcript_data: res.entries.map((e) => ({
      role: e.role,
      transcript: e.transcript,
      absolute_timestamp: Number(e.absoluteTimestamp),
      relative_timestamp: Number(e.relativeTimestamp),
    })),
    next_timestamp: Number(res.nextTimestamp),
  };
}
