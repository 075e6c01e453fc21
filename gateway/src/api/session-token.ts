import { MintSessionTokenRequestSchema } from "@avatar/contracts/tokens";
import type { Clients } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { HttpError, toHttpError } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import { MAX_DURATION_WIRE_LIMIT, toSessionRequest } from "./session-token.mapping.js";
import type { TokenBody } from "./session-token.schema.js";
import { batchedMints, type MintToken } from "./token-mints.js";

export { tokenRequestBody } from "./session-token.schema.js";

type Ctx = RequestContext<unknown, unknown, TokenBody>;

const DURATION_FIELD = "max_session_duration";

/** One batch of mints per tokens client (token-mints.ts), made at its first mint. */
const mintsByClient = new WeakMap<Clients["tokens"], MintToken>();

function mintsOf(tokens: Clients["tokens"]): MintToken {
  let mints = mintsByClient.get(tokens);
  if (!mints) {
    mints = batchedMints(tokens);
    mintsByClient.set(tokens, mints);
  }
  return mints;
}

/**
 * POST /v1/sessions/token: the body, validated and defaulted by its schema, goes to the tokens service
 * (with the other mints of its turn), which applies the rules, creates the session and signs its token.
 */
export async function mintSessionToken(ctx: Ctx): Promise<RouteResult> {
  const { principal } = ctx;
  // The route takes API keys only; the check keeps the handler honest if the policy ever changes.
  if (principal.kind !== "api_key") throw new HttpError(403, "This operation requires an API key");
  try {
    const mint = create(MintSessionTokenRequestSchema, {
      spaceId: principal.spaceId,
      apiKeyId: principal.apiKeyId,
      request: toSessionRequest(ctx.body),
    });
    const res = await mintsOf(ctx.processClients.tokens)(mint, ctx.requestId);
    return { data: { session_id: res.sessionId, session_token: res.sessionToken } };
  } catch (err) {
    throw as422(err, ctx.body.body.max_session_duration);
  }
}

/**
 * A 422 from the tokens service (the duration limit). The proto field is an int32: a larger duration
 * travels as its maximum, which is over every limit, and the entry then shows what the caller sent.
 */
function as422(err: unknown, sent: number | undefined): unknown {
  const http = toHttpError(err);
  if (http.status !== 422 || !http.issues) return err;
  const narrowed = sent !== undefined && sent > MAX_DURATION_WIRE_LIMIT;
  const atDuration = (loc: (string | number)[]) =>
    loc.length === 2 && loc[0] === "body" && loc[1] === DURATION_FIELD;
  const issues = http.issues.map((entry) => ({
    ...entry,
    input: narrowed && atDuration(entry.loc) ? sent : entry.input,
  }));
  return new HttpError(422, http.message, issues);
}
