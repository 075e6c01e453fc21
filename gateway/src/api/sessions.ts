import { type Session, SessionListType, SessionState } from "@avatar/contracts/sessions";
import { END_REASONS, endReasonToProto } from "@avatar/runtime";
import { SESSION_COOKIE } from "../auth/credentials.js";
import { forVisitor } from "../embed/visitor-errors.js";
import { HttpError } from "../http/http-error.js";
import type { Principal, RequestContext, RouteResult } from "../http/route.js";
import { paginated } from "../present/paginated.js";
import { presentSession, presentStart, presentTranscript } from "../present/sessions.js";
import * as s from "../schema/index.js";
import { pageQuery, pageRequest } from "./paging.js";

export const sessionPath = s.path({ session_id: s.uuid() });

export const sessionListQuery = s.query({
  type: s.enumOf(["active", "historic"], { name: "SessionListTypeEnum" }).optional(),
  avatar_id: s.uuid().optional(),
  embed_id: s.uuid().optional(),
  context_id: s.uuid().optional(),
  ...pageQuery,
});

/** Epoch milliseconds, exact as integers up to 2^53 - 1 (and an int64 on the way to the service). */
const timestamp = () => s.int({ ge: 0, le: Number.MAX_SAFE_INTEGER });

export const transcriptQuery = s.query({
  start_timestamp: timestamp().optional(),
  end_timestamp: timestamp().optional(),
});

const sessionIdField = s.uuid().nullable().optional();

export const startBody = s.object("StartSessionRequest", { session_id: sessionIdField });
export const keepAliveBody = s.object("KeepAliveSessionRequest", { session_id: sessionIdField });
export const stopBody = s.object("StopSessionRequest", {
  session_id: sessionIdField,
  reason: s.enumOf(END_REASONS, { name: "SessionEndReasonEnum" }).nullable().optional(),
});

type Ctx<P = unknown, Q = unknown, B = undefined> = RequestContext<P, Q, B>;
type SessionIdBody = { session_id?: string | null };

const sessionNotFound = () => new HttpError(404, "Session not found");
const sameId = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The session a lifecycle call acts on. With an API key the body names it (422 when it does not); with a
 * session token it is the token's own session, and a body naming another one finds nothing (404).
 */
function lifecycleTarget(principal: Principal, body: SessionIdBody): { spaceId: string; sessionId: string } {
  const named = body.session_id ?? undefined;
  if (principal.kind === "api_key") {
    if (!named) {
      throw new HttpError(422, "Field required", [
        { type: "missing", loc: ["body", "session_id"], msg: "Field required", input: body },
      ]);
    }
    return { spaceId: principal.spaceId, sessionId: named };
  }
  if (principal.kind === "session") {
    if (named && !sameId(named, principal.sessionId)) throw sessionNotFound();
    return { spaceId: principal.spaceId, sessionId: principal.sessionId };
  }
  throw new HttpError(401, "Not authenticated");
}

/** The space whose session `sessionId` a read may see: a session token or cookie sees only its own. */
export function readScope(principal: Principal, sessionId: string): string {
  if (principal.kind === "api_key") return principal.spaceId;
  if (principal.kind === "session") {
    if (!sameId(sessionId, principal.sessionId)) throw sessionNotFound();
    return principal.spaceId;
  }
  throw new HttpError(401, "Not authenticated");
}

/** Contract section 2: a session token stops working once its session has ended. */
const tokenOfEndedSession = () =>
  new HttpError(401, "Not authenticated: the session has ended and its token no longer works");

function refuseEndedForToken(principal: Principal, session: Session | undefined): void {
  if (principal.kind === "session" && session?.state === SessionState.ENDED) throw tokenOfEndedSession();
}

/**
 * readScope, and for a session token (or cookie) also that its session has not ended: operations that
 * do not read the session themselves look it up first.
 */
async function liveReadScope(ctx: Ctx<unknown, unknown, unknown>, sessionId: string): Promise<string> {
  const spaceId = readScope(ctx.principal, sessionId);
  if (ctx.principal.kind === "session") {
    const { session } = await ctx.clients.sessions.getSession({ spaceId, sessionId });
    refuseEndedForToken(ctx.principal, session);
  }
  return spaceId;
}

function apiKeySpace(principal: Principal): string {
  if (principal.kind !== "api_key") throw new HttpError(403, "This operation requires an API key");
  return principal.spaceId;
}

/**
 * The session cookie: the browser that started a session may read it. Secure when the caller came over
 * HTTPS (its own TLS, or a trusted proxy's X-Forwarded-Proto / Forwarded) or the public address is https.
 */
function sessionCookie(token: string, https: boolean, baseUrl: string): string {
  const secure = https || new URL(baseUrl).protocol === "https:" ? "; Secure" : "";
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=None; Path=/${secure}`;
}

export async function startSession(
  ctx: Ctx<unknown, unknown, s.Infer<typeof startBody>>,
): Promise<RouteResult> {
  const { principal } = ctx;
  if (principal.kind !== "session") throw new HttpError(403, "This operation requires a session token");
  // A token minted with a key that has since been revoked starts nothing (embed tokens have no key).
  if (principal.apiKeyId && (await ctx.apiKeyRevoked(principal.apiKeyId))) {
    throw new HttpError(401, "The API key that minted this session token has been revoked");
  }
  const target = lifecycleTarget(principal, ctx.body);
  // A token minted without an API key is an embed visitor's: its failures are told in visitor words.
  const res = await ctx.clients.sessions.startSession(target).catch((err: unknown) => {
    if (principal.apiKeyId) throw err;
    ctx.log.info("an embed visitor's start failed", { err });
    throw forVisitor(err);
  });
  ctx.setCookie(sessionCookie(principal.token, ctx.https, ctx.baseUrl));
  return { data: presentStart(res, ctx.baseUrl) };
}

export async function stopSession(
  ctx: Ctx<unknown, unknown, s.Infer<typeof stopBody>>,
): Promise<RouteResult> {
  const target = lifecycleTarget(ctx.principal, ctx.body);
  const { session } = await ctx.clients.sessions.stopSession({
    ...target,
    ...(ctx.body.reason ? { reason: endReasonToProto(ctx.body.reason) } : {}),
  });
  return { data: session ? presentSession(session) : null };
}

export async function keepAliveSession(
  ctx: Ctx<unknown, unknown, s.Infer<typeof keepAliveBody>>,
): Promise<RouteResult> {
  const { session } = await ctx.clients.sessions.keepAliveSession(lifecycleTarget(ctx.principal, ctx.body));
  return { data: session ? presentSession(session) : null };
}

export async function listSessions(
  ctx: Ctx<unknown, s.Infer<typeof sessionListQuery>>,
): Promise<RouteResult> {
  const q = ctx.query;
  const res = await ctx.clients.sessions.listSessions({
    spaceId: apiKeySpace(ctx.principal),
    type:
      q.type === "active"
        ? SessionListType.ACTIVE
        : q.type === "historic"
          ? SessionListType.HISTORIC
          : SessionListType.UNSPECIFIED,
    ...(q.avatar_id ? { avatarId: q.avatar_id } : {}),
    ...(q.embed_id ? { embedId: q.embed_id } : {}),
    ...(q.context_id ? { contextId: q.context_id } : {}),
    page: pageRequest(q),
  });
  return { data: paginated(res.sessions.map(presentSession), res.page, ctx.url, ctx.baseUrl) };
}

export async function getSession(ctx: Ctx<s.Infer<typeof sessionPath>>): Promise<RouteResult> {
  const sessionId = ctx.params.session_id;
  const { session } = await ctx.clients.sessions.getSession({
    spaceId: readScope(ctx.principal, sessionId),
    sessionId,
  });
  refuseEndedForToken(ctx.principal, session);
  return { data: session ? presentSession(session) : null };
}

export async function getTranscript(
  ctx: Ctx<s.Infer<typeof sessionPath>, s.Infer<typeof transcriptQuery>>,
): Promise<RouteResult> {
  const sessionId = ctx.params.session_id;
  const { start_timestamp: start, end_timestamp: end } = ctx.query;
  const res = await ctx.clients.sessions.getTranscript({
    spaceId: await liveReadScope(ctx, sessionId),
    sessionId,
    ...(start !== undefined ? { startTimestamp: BigInt(start) } : {}),
    ...(end !== undefined ? { endTimestamp: BigInt(end) } : {}),
  });
  return { data: presentTranscript(res) };
}

export async function deleteSessionEvents(ctx: Ctx<s.Infer<typeof sessionPath>>): Promise<RouteResult> {
  const sessionId = ctx.params.session_id;
  const res = await ctx.clients.sessions.deleteSessionEvents({
    spaceId: await liveReadScope(ctx, sessionId),
    sessionId,
  });
  return {
    data: { deleted_events: res.deletedEvents, deleted_transcript_entries: res.deletedTranscriptEntries },
  };
}

export async function getCredits(ctx: Ctx): Promise<RouteResult> {
  const res = await ctx.clients.sessions.getCredits({ spaceId: apiKeySpace(ctx.principal) });
  return { data: { credits_left: res.creditsLeft } };
}
