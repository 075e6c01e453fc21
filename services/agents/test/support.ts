/** Shared by the agents service tests: a migrated database, an in-memory catalog, direct calls. */
import { randomBytes, randomUUID } from "node:crypto";
import { AgentsService } from "@avatar/contracts/agents";
import {
  type Avatar,
  AvatarSchema,
  AvatarStatus,
  CatalogService,
  type Voice,
  VoiceSchema,
} from "@avatar/contracts/catalog";
import {
  createSealer,
  errorDetailOf,
  type Logger,
  notFound,
  readSecretDestinations,
  type Sealer,
} from "@avatar/runtime";
import {
  callDirectly,
  collectingLogger,
  type DirectCalls,
  openServiceDb,
  type ServiceTestDb,
} from "@avatar/testkit";

export { callDirectly, collectingLogger };

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type Client,
  type Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type ServiceImpl,
} from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { AgentsChanges } from "../src/changes.js";
import { migrations } from "../src/migrations/index.js";
import type { AgentsDatabase } from "../src/schema.js";
import { agentsService } from "../src/service.js";

export const SPACE_A = "0a000000-0000-4000-8000-00000000000a";
export const SPACE_B = "0b000000-0000-4000-8000-00000000000b";
export const MISSING = "00000000-0000-4000-8000-000000000000";

/** A sealer with a fresh key, and the ENCRYPTION_KEYS text that gives the same key to a service. */
export function testSealer(id = "k1"): { sealer: Sealer; env: string } {
  const key = randomBytes(32);
  return { sealer: createSealer([{ id, key }], id), env: `${id}:${key.toString("base64")}` };
}

export type AgentsTestDb = ServiceTestDb<AgentsDatabase>;

/** A database of this test file with the agents schema migrated. */
export const openAgentsDb = (): Promise<AgentsTestDb> => openServiceDb<AgentsDatabase>("agents", migrations);

export async function clearAgents(db: Kysely<AgentsDatabase>): Promise<void> {
  for (const table of ["embeds", "llm_configurations", "secrets", "voice_agents", "contexts"] as const) {
    await db.deleteFrom(table).execute();
  }
}

/**
 * The catalog as the agents service sees it: avatars and voices that are public or belong to a space,
 * others a NotFound, as the real catalog answers.
 */
export class FakeCatalog {
  readonly avatars = new Map<string, Avatar>();
  readonly voices = new Map<string, Voice>();
  readonly languages = [
    { language: "English", code: "en" },
    { language: "Japanese", code: "ja" },
  ];

  addAvatar(init: MessageInitShape<typeof AvatarSchema> = {}): Avatar {
    const avatar = create(AvatarSchema, {
      id: randomUUID(),
      status: AvatarStatus.ACTIVE,
      name: "A",
      ...init,
    });
    this.avatars.set(avatar.id, avatar);
    return avatar;
  }

  addVoice(init: MessageInitShape<typeof VoiceSchema> = {}): Voice {
    const voice = create(VoiceSchema, { id: randomUUID(), name: "V", ...init });
    this.voices.set(voice.id, voice);
    return voice;
  }

  impl(): Partial<ServiceImpl<typeof CatalogService>> {
    const visible = (spaceId: string, r: { spaceId: string; isPublic: boolean }) =>
      r.isPublic || r.spaceId === spaceId;
    return {
      getAvatar: async (req) => {
        const avatar = this.avatars.get(req.avatarId);
        if (!avatar || !visible(req.spaceId, avatar))
          throw notFound("Avatar not found", { field: "avatar_id" });
        return { avatar };
      },
      getVoice: async (req) => {
        const voice = this.voices.get(req.voiceId);
        if (!voice || !visible(req.spaceId, voice)) throw notFound("Voice not found", { field: "voice_id" });
        return { voice };
      },
      listLanguages: async () => ({ languages: this.languages }),
    };
  }

  client(): Client<typeof CatalogService> {
    return createClient(
      CatalogService,
      createRouterTransport((router) => router.service(CatalogService, this.impl())),
    );
  }
}

export interface DirectService {
  agents: DirectCalls<typeof AgentsService>;
  /** The changes announced, `<kind> <id>`, each listed once its announcement resolved. */
  told: string[];
  catalog: FakeCatalog;
  sealer: Sealer;
  log: Logger;
  lines: string[];
}

/** The operator's vendorB endpoint in these tests: vendorB keys may go to its host. */
export const TEST_DESTINATIONS = readSecretDestinations({
  PROVIDER_VENDORB_URL: "https://api.example.com/v1",
});

export function directService(db: Kysely<AgentsDatabase>): DirectService {
  const catalog = new FakeCatalog();
  const { sealer } = testSealer();
  const { log, lines } = collectingLogger();
  const told: string[] = [];
  // As the bus confirms it (publishInvalidation): a moment after the call.
  const announcer = (kind: keyof AgentsChanges) => async (id: string) => {
    await new Promise((r) => setTimeout(r, 5));
    told.push(`${kind} ${id}`);
  };
  const changes: Required<AgentsChanges> = {
    contexts: announcer("contexts"),
    voiceAgents: announcer("voiceAgents"),
    llmConfigurations: announcer("llmConfigurations"),
    secrets: announcer("secrets"),
    embeds: announcer("embeds"),
  };
  return {
    agents: callDirectly(
      AgentsService,
      agentsService({ db, catalog: catalog.client(), sealer, log, destinations: TEST_DESTINATIONS, changes }),
    ),
    told,
    catalog,
    sealer,
    log,
    lines,
  };
}

/**
 * What each test file of the service sets up: a database of its own with the service on it (beforeAll),
 * emptied before each test, closed after all. Named at the top of a file, `t` and `s` are read in its tests.
 */
export function agentsUnderTest(): { t: AgentsTestDb; s: DirectService } {
  let t: AgentsTestDb | undefined;
  let s: DirectService | undefined;
  beforeAll(async () => {
    t = await openAgentsDb();
    s = directService(t.db);
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    if (t) await clearAgents(t.db);
    s?.told.splice(0);
  });
  return { t: setLater(() => t), s: setLater(() => s) };
}

/** A stand-in for a value that beforeAll sets: each property is read from the value when it is used. */
function setLater<T extends object>(current: () => T | undefined): T {
  return new Proxy({} as T, {
    get: (_target, key) => {
      const value = current();
      if (value === undefined) throw new Error("read before beforeAll set it");
      return Reflect.get(value, key);
    },
  });
}

/** The ConnectError a call failed with (fails the test when it succeeded). */
export async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** Asserts the code and, when given, the field the error names (in its detail and in its message). */
export async function expectFailure(
  promise: Promise<unknown>,
  code: Code,
  field?: string,
): Promise<ConnectError> {
  const err = await failure(promise);
  expect(err.code, err.message).toBe(code);
  if (field !== undefined) {
    expect(errorDetailOf(err)?.field).toBe(field);
    expect(err.rawMessage).toContain(field);
  }
  return err;
}
