import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  type SessionConfig,
  SessionConfigSchema,
  SessionMode,
  SessionSource,
} from "@avatar/contracts/common";
import { EmbedAdmissionSchema, SessionEndReason } from "@avatar/contracts/sessions";
import {
  type MintOutcomeSchema,
  type MintSessionTokenRequest,
  type MintSessionTokenResponse,
  TokensService,
} from "@avatar/contracts/tokens";
import {
  answerEach,
  type Clients,
  invalidRequest,
  isUuid,
  type Logger,
  notFound,
  requestIdFrom,
} from "@avatar/runtime";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import type { AgentsLookup } from "./agents-cache.js";
import type { CatalogLookup } from "./catalog-cache.js";
import { sessionClaims } from "./claims.js";
import { sessionDuration, spaceDurationLimit } from "./duration.js";
import { LanguageCodes } from "./languages.js";
import { mintEmbedSessionToken } from "./mint-embed.js";
import type { MintSettings } from "./mint-settings.js";
import { resolveAvatar } from "./resolve-avatar.js";
import { resolveMemory } from "./resolve-memory.js";
import { resolveSessionConfig } from "./resolve-session.js";
import { checkRequestRules } from "./rules.js";
import type { TokensDatabase } from "./schema.js";
import type { CreateSession, NewSessionRequest } from "./session-creations.js";
import type { SessionTokenSigner } from "./signing-keys.js";
import type { SpaceLookup } from "./space-cache.js";

export interface MintDeps {
  db: Kysely<TokensDatabase>;
  spaces: SpaceLookup;
  /** The catalog's GetAvatar and GetVoice, usually cached (catalog-cache.ts). */
  catalog: CatalogLookup;
  /** The agents service's lookups of a mint, usually cached (agents-cache.ts). */
  agents: AgentsLookup;
  /** Signs the token; its clock (`now`) also gives the token's lifetime. */
  signer: Pick<SessionTokenSigner, "signing" | "now">;
  clients: Pick<Clients, "catalog" | "memory" | "sessions">;
  /** Creates the session record; the sessions client's CreateSession when absent. */
  createSession?: CreateSession;
  log: Logger;
  settings: MintSettings;
  languages?: LanguageCodes;
}

type Minted = Pick<MintSessionTokenResponse, "sessionId" | "sessionToken">;
type MintOutcomeInit = MessageInitShape<typeof MintOutcomeSchema>;

/**
 * MintSessionToken: every rule is checked, every reference resolved and the signing key found before
 * anything is created; then the session record is created for a fresh session id and its token signed
 * while the record is written. A mint whose record or token failed hands out no token, and its record,
 * if one was written (a creation that timed out, a signature that failed), is ended at once rather than
 * left for the never-started reaper.
 */
export async function mintSessionToken(
  deps: MintDeps,
  req: MintSessionTokenRequest,
  origin: {
    embedId?: string;
    embedAdmission?: { maxConcurrentSessions: number; maxSessionsPerHour: number };
  } = {},
): Promise<Minted> {
  const request = req.request;
  if (!request) throw invalidRequest("request is required", { field: "request" });
  checkRequestRules(request);

  const space = isUuid(req.spaceId) ? await deps.spaces.find(req.spaceId) : undefined;
  if (!space) throw notFound("Space not found", { field: "space_id" });
  const maxSessionDuration = sessionDuration(request.maxSessionDuration, spaceDurationLimit(space), {
    isSandbox: request.isSandbox,
    maxSeconds: deps.settings.sandboxMaxSeconds,
  });

  const { memory, sessions } = deps.clients;
  const languages = deps.languages ?? new LanguageCodes(deps.clients.catalog);
  const avatar = await resolveAvatar(deps.catalog, space.id, request);
  const init = await resolveSessionConfig(
    { catalog: deps.catalog, agents: deps.agents, languages },
    space.id,
    avatar,
    request,
  );
  const memoryId =
    init.mode === SessionMode.FULL ? await resolveMemory(memory, space.id, request.memory) : "";
  init.memoryId = memoryId;
  if (origin.embedId) {
    init.embedId = origin.embedId;
    init.source = SessionSource.EMBED;
  }
  const config: SessionConfig = create(SessionConfigSchema, init);

  const signToken = await deps.signer.signing();
  const sessionId = randomUUID();
  const nowSeconds = Math.floor(deps.signer.now() / 1000);
  const { startWindowSeconds, tokenGraceSeconds } = deps.settings;
  const createSession: CreateSession =
    deps.createSession ?? (async (r) => void (await sessions.createSession(r)));
  const newSession: NewSessionRequest = {
    sessionId,
    spaceId: space.id,
    apiKeyId: req.apiKeyId,
    config,
    maxSessionDuration,
  };
  if (origin.embedAdmission) newSession.embedAdmission = create(EmbedAdmissionSchema, origin.embedAdmission);
  const creation = settled(createSession(newSession));
  try {
    await creationSent();
    const sessionToken = signToken(
      sessionClaims({
        sessionId,
        spaceId: space.id,
        apiKeyId: req.apiKeyId,
        config,
        expiresAt: nowSeconds + startWindowSeconds + maxSessionDuration + tokenGraceSeconds,
      }),
    );
    const created = await creation;
    if ("error" in created) throw created.error;
    return { sessionId, sessionToken };
  } catch (err) {
    // A failed creation may have written the record all the same (a timeout), and a failed signature
    // follows a creation that may still be under way: end the record, if there is one, once it is.
    await creation;
    await sessions
      .endSession({ sessionId, reason: SessionEndReason.SERVER_ERROR })
      .catch((endErr: unknown) =>
        deps.log.debug("no session to end after a failed mint", { sessionId, endErr }),
      );
    throw err;
  }
}

/** A promise's outcome as a value, so that it can wait unobserved without an unhandled rejection. */
function settled(promise: Promise<unknown>): Promise<{ ok: true } | { error: unknown }> {
  return promise.then(
    () => ({ ok: true }) as const,
    (error: unknown) => ({ error }),
  );
}

/** The wait of the mints of the current turn (creationSent), until its first turn has passed. */
let creationsOfThisTurn: Promise<void> | undefined;

/**
 * Two turns of the event loop: the creations of a turn leave in one batch at its end (session-creations.ts),
 * and in one process the sessions service sends their insert one turn later. Signing after that works
 * while Postgres does, where signing before would add to the time the batch's callers all wait. The mints
 * of one turn share one wait (two immediates a turn, not two a mint).
 */
function creationSent(): Promise<void> {
  if (!creationsOfThisTurn) {
    creationsOfThisTurn = (async () => {
      await nextTurn();
      creationsOfThisTurn = undefined;
      await nextTurn();
    })();
  }
  return creationsOfThisTurn;
}

/** The MintSessionToken and MintEmbedSessionToken part of TokensService. */
export function mintService(
  deps: MintDeps,
): Pick<
  ServiceImpl<typeof TokensService>,
  "mintSessionToken" | "mintSessionTokensBatch" | "mintEmbedSessionToken"
> {
  // The catalog client is taken at the first call, not while the service builds.
  const languages =
    deps.languages ?? new LanguageCodes({ listLanguages: (r) => deps.clients.catalog.listLanguages(r) });
  const withCache: MintDeps = { ...deps, languages };
  return {
    mintSessionToken: (req) => mintSessionToken(withCache, req),
    async mintSessionTokensBatch(req) {
      const outcomes = await answerEach<MintSessionTokenRequest, Minted, MintOutcomeInit>(req.mints, {
        field: "mints",
        method: TokensService.method.mintSessionTokensBatch,
        log: deps.log,
        run: (mint) => mintSessionToken(withCache, mint),
        ok: (minted) => ({ minted }),
        failed: (error) => ({ error }),
        // Each mint's failure is logged under the request id it came with.
        requestId: (i) => requestIdFrom(req.requestIds[i]),
      });
      return { outcomes };
    },
    mintEmbedSessionToken: (req) => mintEmbedSessionToken(withCache, req),
  };
}
