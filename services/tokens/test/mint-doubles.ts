/**
 * Test doubles for the services MintSessionToken calls: small in-memory implementations of just the RPCs
 * it uses (catalog GetAvatar/GetVoice/ListLanguages, agents GetVoiceAgent/GetContext/GetSecret/
 * GetLlmConfiguration, memory ResolveMemory, sessions CreateSession/EndSession/ListSessions), served
 * in-process with createRouterTransport. They follow the contracts' visibility rules (another space's
 * private resource is NotFound) and nothing more; the real services have their own tests.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  AgentsService,
  type Context,
  ContextSchema,
  type LlmConfiguration,
  LlmConfigurationSchema,
  type Secret,
  SecretSchema,
  type SecretType,
  type VoiceAgent,
  VoiceAgentSchema,
} from "@avatar/contracts/agents";
import {
  type Avatar,
  AvatarSchema,
  AvatarStatus,
  CatalogService,
  type Voice,
  VoiceSchema,
} from "@avatar/contracts/catalog";
import type { SessionConfig } from "@avatar/contracts/common";
import { MemoryService } from "@avatar/contracts/memory";
import {
  type Session,
  SessionEndReason,
  SessionSchema,
  SessionState,
  SessionsService,
} from "@avatar/contracts/sessions";
import { type Clients, createSealer, notFound, silentLogger } from "@avatar/runtime";
import { openServiceDb, type TestDatabase } from "@avatar/testkit";
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { defaultMintSettings, type MintDeps } from "../src/index.js";
import { migrations } from "../src/migrations/index.js";
import * as repo from "../src/repository.js";
import type { TokensDatabase } from "../src/schema.js";
import { SessionTokenSigner } from "../src/signing-keys.js";
import { cachedSpaces } from "../src/space-cache.js";

type Init<D extends DescMessage> = Exclude<MessageInitShape<D>, MessageShape<D>>;

export const SPACE = "11111111-1111-4111-8111-111111111111";
export const OTHER_SPACE = "22222222-2222-4222-8222-222222222222";
export const API_KEY_ID = "33333333-3333-4333-8333-333333333333";

/** Everything the doubles know; tests add to it. */
export class World {
  avatars = new Map<string, Avatar>();
  voices = new Map<string, Voice>();
  languages = ["en", "es", "ja"];
  agents = new Map<string, VoiceAgent>();
  contexts = new Map<string, Context>();
  secrets = new Map<string, Secret>();
  llmConfigurations = new Map<string, LlmConfiguration>();
  /** Memory id by prev session id (what ResolveMemory reuses), and the memories themselves. */
  memoryOfSession = new Map<string, string>();
  memories = new Map<string, { id: string; spaceId: string }>();
  /** Prev session ids the memory double may create a memory for. */
  endedFullSessions = new Set<string>();
  sessions: { session: Session; config: SessionConfig | undefined }[] = [];
  ended: string[] = [];
  calls: string[] = [];
  /** When set, CreateSession writes the record and then fails with this error. */
  failCreateAfterWrite: Error | undefined;

  avatar(init: Init<typeof AvatarSchema> = {}): Avatar {
    const a = create(AvatarSchema, {
      id: randomUUID(),
      spaceId: SPACE,
      name: "Ann",
      type: "VIDEO",
      status: AvatarStatus.ACTIVE,
      sandboxEnabled: true,
      ...init,
    });
    this.avatars.set(a.id, a);
    return a;
  }

  voice(init: Init<typeof VoiceSchema> = {}): Voice {
    const v = create(VoiceSchema, {
      id: randomUUID(),
      name: "Ava",
      language: "en",
      isPublic: true,
      voiceEngines: ["vendorA", "vendorE", "vendorD"],
      ...init,
    });
    this.voices.set(v.id, v);
    return v;
  }

  context(init: Init<typeof ContextSchema> = {}): Context {
    const c = create(ContextSchema, { id: randomUUID(), spaceId: SPACE, name: "ctx", ...init });
    this.contexts.set(c.id, c);
    return c;
  }

  agent(init: Init<typeof VoiceAgentSchema>): VoiceAgent {
    const a = create(VoiceAgentSchema, { id: randomUUID(), spaceId: SPACE, name: "agent", ...init });
    this.agents.set(a.id, a);
    return a;
  }

  secret(type: SecretType, spaceId = SPACE): Secret {
    const s = create(SecretSchema, { id: randomUUID(), spaceId, secretName: "key", secretType: type });
    this.secrets.set(s.id, s);
    return s;
  }

  llmConfiguration(spaceId = SPACE): LlmConfiguration {
    const l = create(LlmConfigurationSchema, { id: randomUUID(), spaceId, displayName: "mine" });
    this.llmConfigurations.set(l.id, l);
    return l;
  }

  memory(spaceId = SPACE, prevSessionId?: string): string {
    const id = randomUUID();
    this.memories.set(id, { id, spaceId });
    if (prevSessionId) this.memoryOfSession.set(prevSessionId, id);
    return id;
  }
}

const visible = (spaceId: string, r: { spaceId: string; isPublic?: boolean }) =>
  r.isPublic === true || r.spaceId === spaceId;

function find<T extends { spaceId: string; isPublic?: boolean }>(
  map: Map<string, T>,
  id: string,
  spaceId: string,
  what: string,
): T {
  const r = map.get(id);
  if (!r || !visible(spaceId, r)) throw notFound(`${what} not found`);
  return r;
}

/** Clients for MintSessionToken, each served by its test double. */
export function doubleClients(world: World): Pick<Clients, "catalog" | "agents" | "memory" | "sessions"> {
  const catalog = createRouterTransport(({ service }) =>
    service(CatalogService, {
      async getAvatar(req) {
        world.calls.push("catalog.getAvatar");
        return { avatar: find(world.avatars, req.avatarId, req.spaceId, "Avatar") };
      },
      async getVoice(req) {
        world.calls.push("catalog.getVoice");
        return { voice: find(world.voices, req.voiceId, req.spaceId, "Voice") };
      },
      async listLanguages() {
        return { languages: world.languages.map((code) => ({ code, language: code })) };
      },
    }),
  );
  const agents = createRouterTransport(({ service }) =>
    service(AgentsService, {
      async getVoiceAgent(req) {
        world.calls.push("agents.getVoiceAgent");
        return { voiceAgent: find(world.agents, req.voiceAgentId, req.spaceId, "Voice agent") };
      },
      async getContext(req) {
        world.calls.push("agents.getContext");
        return { context: find(world.contexts, req.contextId, req.spaceId, "Context") };
      },
      async getSecret(req) {
        world.calls.push("agents.getSecret");
        const s = world.secrets.get(req.secretId);
        if (!s || s.spaceId !== req.spaceId) throw notFound("Secret not found");
        return { secret: s };
      },
      async getLlmConfiguration(req) {
        world.calls.push("agents.getLlmConfiguration");
        const l = world.llmConfigurations.get(req.llmConfigurationId);
        if (!l || l.spaceId !== req.spaceId) throw notFound("LLM configuration not found");
        return { llmConfiguration: l };
      },
    }),
  );
  const memory = createRouterTransport(({ service }) =>
    service(MemoryService, {
      async resolveMemory(req) {
        world.calls.push("memory.resolveMemory");
        let attached: string | undefined;
        if (req.sessionMemoryId !== undefined) {
          const m = world.memories.get(req.sessionMemoryId);
          if (!m || m.spaceId !== req.spaceId)
            throw notFound("Memory not found", { field: "session_memory_id" });
          attached = m.id;
        }
        let seeded: string | undefined;
        if (req.prevSessionId !== undefined) {
          seeded = world.memoryOfSession.get(req.prevSessionId);
          if (!seeded) {
            if (!world.endedFullSessions.has(req.prevSessionId))
              throw notFound("Session not found", { field: "prev_session_id" });
            seeded = world.memory(req.spaceId, req.prevSessionId);
          }
        }
        // This double answers the memory prev_session_id resolves to; the caller compares.
        const id = seeded ?? attached ?? "";
        return { memory: { id, spaceId: req.spaceId }, created: false };
      },
    }),
  );
  const sessions = createRouterTransport(({ service }) =>
    service(SessionsService, {
      async createSession(req) {
        world.calls.push("sessions.createSession");
        const session = create(SessionSchema, {
          id: req.sessionId,
          spaceId: req.spaceId,
          apiKeyId: req.apiKeyId,
          state: SessionState.CREATED,
          mode: req.config?.mode ?? 0,
          isSandbox: req.config?.isSandbox ?? false,
          maxSessionDuration: req.maxSessionDuration,
        });
        world.sessions.push({ session, config: req.config });
        if (world.failCreateAfterWrite) throw world.failCreateAfterWrite;
        return { session };
      },
      async endSession(req) {
        world.calls.push("sessions.endSession");
        const found = world.sessions.find((s) => s.session.id === req.sessionId);
        if (!found) throw notFound("Session not found");
        found.session.state = SessionState.ENDED;
        found.session.endReason = req.reason || SessionEndReason.USER_CLOSED;
        world.ended.push(req.sessionId);
        return { session: found.session };
      },
      async listSessions(req) {
        return {
          sessions: world.sessions.filter((s) => s.session.spaceId === req.spaceId).map((s) => s.session),
        };
      },
    }),
  );
  return {
    catalog: createClient(CatalogService, catalog),
    agents: createClient(AgentsService, agents),
    memory: createClient(MemoryService, memory),
    sessions: createClient(SessionsService, sessions),
  };
}

/** The tokens service's own database (spaces, signing keys) on a fresh test database. */
export interface TokensFixture {
  db: Kysely<TokensDatabase>;
  signer: SessionTokenSigner;
  testDb: TestDatabase;
  close(): Promise<void>;
}

/** `now` is the clock the tokens service runs on in these tests (signing, lifetimes, verifying). */
export async function tokensFixture(now?: () => number): Promise<TokensFixture> {
  const { db, database: testDb, close } = await openServiceDb<TokensDatabase>("tokens", migrations, 3);
  const sealer = createSealer([{ id: "test", key: randomBytes(32) }], "test");
  const signer = new SessionTokenSigner(db, sealer, now ? { now } : {});
  await signer.ensureKey();
  await repo.insertSpace(db, { id: SPACE, name: "mine", tier: "free", max_session_duration: null });
  await repo.insertSpace(db, { id: OTHER_SPACE, name: "theirs", tier: "pro", max_session_duration: 900 });
  return {
    db,
    signer,
    testDb,
    close,
  };
}

export function mintDeps(fixture: TokensFixture, world: World): MintDeps {
  const clients = doubleClients(world);
  return {
    db: fixture.db,
    spaces: cachedSpaces(fixture.db, undefined),
    catalog: clients.catalog,
    agents: clients.agents,
    signer: fixture.signer,
    clients,
    log: silentLogger,
    settings: defaultMintSettings,
  };
}
