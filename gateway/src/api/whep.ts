import { RequestTimeoutError } from "@avatar/bus";
import {
  WhepRequestSchema,
  type WhepResponse,
  WhepResponseSchema,
  WhepStatus,
} from "@avatar/contracts/pipeline";
import { SessionState } from "@avatar/contracts/sessions";
import { realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { HttpError, serviceUnavailable } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import * as s from "../schema/index.js";
import { readScope } from "./sessions.js";

/**
 * WHEP (draft-ietf-wish-whep) for the avatar's stream, contract section 7: a viewer POSTs a recvonly
 * SDP offer and gets the session's worker's answer, with a Location to DELETE when it leaves. The
 * gateway checks the credential and the session's state; the offer itself is answered by the worker
 * that runs the session, over the bus.
 */

export const SDP = "application/sdp";
export const whepPath = s.path({ session_id: s.uuid() });
export const viewerPath = s.path({ session_id: s.uuid(), viewer_id: s.string({ maxLength: 64 }) });

/** How long a worker may take to answer (it gathers its ICE candidates first). */
const WORKER_ANSWER_TIMEOUT_MS = 10_000;

type Ctx<P, B = undefined> = RequestContext<P, unknown, B>;

export async function offerViewer(ctx: Ctx<s.Infer<typeof whepPath>, string>): Promise<RouteResult> {
  const sessionId = ctx.params.session_id;
  await requireStarted(ctx, sessionId);
  if (!ctx.body.trimStart().startsWith("v=")) throw new HttpError(400, "The body is not an SDP offer");
  const res = await relay(ctx, sessionId, { action: { case: "offerSdp", value: ctx.body } });
  return {
    status: 201,
    raw: { contentType: SDP, body: res.answerSdp },
    headers: { Location: `/v1/sessions/${sessionId}/whep/${encodeURIComponent(res.viewerId)}` },
  };
}

export async function deleteViewer(ctx: Ctx<s.Infer<typeof viewerPath>>): Promise<RouteResult> {
  const { session_id: sessionId, viewer_id: viewerId } = ctx.params;
  const state = await sessionState(ctx, sessionId);
  // A viewer of an ended session ended with it.
  if (state !== SessionState.ENDED) {
    await relay(ctx, sessionId, { action: { case: "deleteViewerId", value: viewerId } });
  }
  return { status: 204, raw: null };
}

async function sessionState(ctx: Ctx<unknown, unknown>, sessionId: string): Promise<SessionState> {
  const { session } = await ctx.clients.sessions.getSession({
    spaceId: readScope(ctx.principal, sessionId),
    sessionId,
  });
  if (!session) throw new HttpError(404, "Session not found");
  return session.state;
}

async function requireStarted(ctx: Ctx<unknown, unknown>, sessionId: string): Promise<void> {
  const state = await sessionState(ctx, sessionId);
  if (state === SessionState.ENDED) throw new HttpError(409, "The session has ended");
  if (state !== SessionState.STARTED) throw new HttpError(409, "The session has not started");
}

/** The worker's answer, or the HTTP error its verdict means. */
async function relay(
  ctx: Ctx<unknown, unknown>,
  sessionId: string,
  request: MessageInitShape<typeof WhepRequestSchema>,
): Promise<WhepResponse> {
  let res: WhepResponse;
  try {
    const reply = await ctx.bus.request(
      realtimeSubjects.whep(sessionId),
      toBinary(WhepRequestSchema, create(WhepRequestSchema, { sessionId, ...request })),
      { timeoutMs: WORKER_ANSWER_TIMEOUT_MS },
    );
    res = fromBinary(WhepResponseSchema, reply);
  } catch (err) {
    ctx.log.warn("no worker answered a WHEP call", { sessionId, err });
    const why = err instanceof RequestTimeoutError ? "took too long to answer" : "is not reachable";
    throw unavailable(`The session's media ${why}; try again`);
  }
  switch (res.status) {
    case WhepStatus.OK:
      return res;
    case WhepStatus.BAD_OFFER:
      throw new HttpError(400, res.message || "The body is not an SDP offer the stream can answer");
    case WhepStatus.TOO_MANY_VIEWERS:
      throw new HttpError(429, res.message || "The session has as many viewers as it may", undefined, {
        "Retry-After": "5",
      });
    case WhepStatus.UNKNOWN_VIEWER:
      throw new HttpError(404, "Viewer not found");
    default:
      throw unavailable(res.message ? `The session's media is unavailable: ${res.message}` : undefined);
  }
}

/** The session's worker could not answer now; a viewer retries within a second. */
const unavailable = (message = "The session's media is unavailable; try again") =>
  serviceUnavailable(message, 1);
