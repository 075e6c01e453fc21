// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what these tests are about
/**
 * MintSessionToken at the direct-call level: every 400/404 rule of interface.md (rules 1-7) and contract
 * section 4, the max_session_duration 422, the resolved SessionConfig and the token's claims. The
 * services it calls are the test doubles of mint-doubles.ts.
 */
import { SecretType } from "@avatar/contracts/agents";
import { AvatarStatus } from "@avatar/contracts/catalog";
import {
  AgentType,
  InteractivityType,
  SessionMode,
  type SessionRequest,
  type SessionRequestSchema,
  VideoQuality,
} from "@avatar/contracts/common";
import { SessionEndReason } from "@avatar/contracts/sessions";
import { MintSessionTokenRequestSchema } from "@avatar/contracts/tokens";
import { errorDetailOf, issueToJson } from "@avatar/runtime";
import { create, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type MintDeps, mintSessionToken } from "../src/mint.js";
import { verifyWithDatabaseKeys } from "../src/verify.js";
import {
  API_KEY_ID,
  mintDeps,
  OTHER_SPACE,
  SPACE,
  type TokensFixture,
  tokensFixture,
  World,
} from "./mint-doubles.js";

type RequestInit = Exclude<MessageInitShape<typeof SessionRequestSchema>, SessionRequest>;

const NOW_MS = Date.UTC(2026, 10, 22, 10, 0, 0);
const NOW_S = NOW_MS / 1000;
/** The tokens service's clock in these tests: NOW_MS unless a test moves it. */
let clockMs = NOW_MS;

let fixture: TokensFixture;
let world: World;

beforeAll(async () => {
  fixture = await tokensFixture(() => clockMs);
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(() => {
  world = new World();
  clockMs = NOW_MS;
});

const str = (value: string) => create(ValueSchema, { kind: { case: "stringValue", value } });
const num = (value: number) => create(ValueSchema, { kind: { case: "numberValue", value } });
const vars = (map: Record<string, string>) => ({
  values: Object.fromEntries(Object.entries(map).map(([k, v]) => [k, str(v)])),
});

function mint(request: RequestInit, spaceId = SPACE, deps: Partial<MintDeps> = {}) {
  return mintSessionToken(
    { ...mintDeps(fixture, world), ...deps },
    create(MintSessionTokenRequestSchema, { spaceId, apiKeyId: API_KEY_ID, request }),
  );
}

/** The ConnectError a call fails with. */
async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConnectError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

async function rejects(p: Promise<unknown>, code: Code, field: string, message?: RegExp) {
  const err = await failure(p);
  expect({ code: Code[err.code], field: errorDetailOf(err)?.field }).toEqual({ code: Code[code], field });
  if (message) expect(err.rawMessage).toMatch(message);
  return err;
}

/** A FULL avatar with a default voice, the usual starting point. */
function fullSetup(avatarInit: Parameters<World["avatar"]>[0] = {}) {
  const voice = world.voice();
  const avatar = world.avatar({ defaultVoice: { id: voice.id, name: voice.name }, ...avatarInit });
  return { voice, avatar };
}

const fullRequest = (avatarId: string, more: RequestInit = {}): RequestInit => ({
  mode: SessionMode.FULL,
  avatarId,
  ...more,
});

const lastSession = () => world.sessions.at(-1);

describe("a FULL request with defaults", () => {
  it("creates a CREATED session with the resolved configuration and signs its token", async () => {
    const { avatar, voice } = fullSetup();
    const minted = await mint(fullRequest(avatar.id));

    expect(world.sessions).toHaveLength(1);
    const stored = lastSession();
    expect(stored?.session.id).toBe(minted.sessionId);
    expect(stored?.session.maxSessionDuration).toBe(600); // free tier
    const config = stored?.config;
    expect(config).toMatchObject({
      mode: SessionMode.FULL,
      avatarId: avatar.id,
      isSandbox: false,
      voiceId: voice.id,
      language: "en",
      interactivityType: InteractivityType.CONVERSATIONAL,
      llmSettings: { provider: "vendorB", model: "gpt-5.4-nano" },
      videoSettings: { quality: VideoQuality.HIGH },
      agentType: AgentType.UNSPECIFIED,
      memoryId: "",
    });
    expect(config?.voiceSettings?.provider).toMatchObject({
      case: "vendorA",
      value: { speed: 1, stability: 0.75, similarityBoost: 0.75, style: 0, useSpeakerBoost: true },
    });

    const claims = decodeJwt(minted.sessionToken);
    expect(claims).toMatchObject({
      sub: minted.sessionId,
      space_id: SPACE,
      api_key_id: API_KEY_ID,
      exp: NOW_S + 600 + 600 + 300,
      start_session_data: {
        mode: "FULL",
        avatar_id: avatar.id,
        is_sandbox: false,
        video_settings: { quality: "high", encoding: "H264" },
        interactivity_type: "CONVERSATIONAL",
        agent_type: null,
      },
    });
    expect(claims.start_session_data).not.toHaveProperty("resolved");
    expect(decodeProtectedHeader(minted.sessionToken)).toMatchObject({
      alg: "ES256",
      kid: expect.any(String),
    });
  });

  it("signs a token the tokens service's own keys verify", async () => {
    const { avatar } = fullSetup();
    const minted = await mint(fullRequest(avatar.id));
    const claims = await verifyWithDatabaseKeys(fixture.signer, minted.sessionToken);
    expect(claims).toMatchObject({ sessionId: minted.sessionId, spaceId: SPACE, mode: SessionMode.FULL });
  });

  it("judges the token's lifetime on the service's clock, not the machine's", async () => {
    const { avatar } = fullSetup();
    const minted = await mint(fullRequest(avatar.id));
    const { exp, iat } = decodeJwt(minted.sessionToken);
    expect(iat).toBe(NOW_S);
    clockMs = (exp ?? 0) * 1000 - 1000;
    expect(await verifyWithDatabaseKeys(fixture.signer, minted.sessionToken)).not.toBeNull();
    clockMs = (exp ?? 0) * 1000 + 1000;
    expect(await verifyWithDatabaseKeys(fixture.signer, minted.sessionToken)).toBeNull();
  });

  it("answers 404 for a space it does not know", async () => {
    const { avatar } = fullSetup();
    await rejects(
      mint(fullRequest(avatar.id), "44444444-4444-4444-8444-444444444444"),
      Code.NotFound,
      "space_id",
    );
  });

  it("picks default voice settings for the first engine the voice supports", async () => {
    const voice = world.voice({ voiceEngines: ["vendorD"] });
    const avatar = world.avatar({ defaultVoice: { id: voice.id } });
    await mint(fullRequest(avatar.id));
    expect(lastSession()?.config?.voiceSettings?.provider).toMatchObject({
      case: "vendorD",
      value: { speed: 1, model: "sonic-3.6" },
    });
  });
});

describe("avatar rules", () => {
  it("404 for an unknown avatar and for another space's private one", async () => {
    await rejects(mint(fullRequest("55555555-5555-4555-8555-555555555555")), Code.NotFound, "avatar_id");
    await rejects(mint(fullRequest("not-a-uuid")), Code.NotFound, "avatar_id");
    const { avatar } = fullSetup({ spaceId: OTHER_SPACE });
    await rejects(mint(fullRequest(avatar.id)), Code.NotFound, "avatar_id");
    expect(world.sessions).toHaveLength(0);
  });

  it("a public avatar of another space is usable", async () => {
    const { avatar } = fullSetup({ spaceId: OTHER_SPACE, isPublic: true });
    await expect(mint(fullRequest(avatar.id))).resolves.toMatchObject({ sessionId: expect.any(String) });
  });

  it.each([
    [AvatarStatus.DEACTIVATED, /DEACTIVATED/],
    [AvatarStatus.DELETED, /DELETED/],
    [AvatarStatus.INIT, /INIT/],
  ])("400 for an avatar in status %s", async (status, message) => {
    const { avatar } = fullSetup({ status });
    await rejects(mint(fullRequest(avatar.id)), Code.InvalidArgument, "avatar_id", message);
    expect(world.sessions).toHaveLength(0);
  });

  it("400 for an expired avatar", async () => {
    const { avatar } = fullSetup({ isExpired: true });
    await rejects(mint(fullRequest(avatar.id)), Code.InvalidArgument, "avatar_id", /expired/);
  });

  it("sandbox needs a sandbox-enabled avatar", async () => {
    const { avatar } = fullSetup({ sandboxEnabled: false });
    await rejects(mint(fullRequest(avatar.id, { isSandbox: true })), Code.InvalidArgument, "is_sandbox");
    await expect(mint(fullRequest(avatar.id, { isSandbox: false }))).resolves.toBeDefined();
  });

  it("very_high needs a 1080p avatar", async () => {
    const { avatar } = fullSetup({ is1080p: false });
    const veryHigh = { videoSettings: { quality: VideoQuality.VERY_HIGH } };
    await rejects(mint(fullRequest(avatar.id, veryHigh)), Code.InvalidArgument, "video_settings.quality");
    await expect(
      mint(fullRequest(avatar.id, { videoSettings: { quality: VideoQuality.HIGH } })),
    ).resolves.toBeDefined();
    const hd = fullSetup({ is1080p: true }).avatar;
    await mint(fullRequest(hd.id, veryHigh));
    expect(lastSession()?.config?.videoSettings?.quality).toBe(VideoQuality.VERY_HIGH);
  });
});

describe("avatar persona", () => {
  it("fills the context's placeholders with the dynamic variables; extra keys are ignored", async () => {
    const { avatar } = fullSetup();
    const context = world.context({
      prompt: "You help ${name} in ${city}. ${unknown} stays.",
      openingText: "Hello ${name}!",
      requiredDynamicVariables: ["city", "name"],
    });
    await mint(
      fullRequest(avatar.id, {
        avatarPersona: { contextId: context.id },
        dynamicVariables: vars({ name: "Ann", city: "Oslo", extra: "x" }),
      }),
    );
    expect(lastSession()?.config).toMatchObject({
      contextId: context.id,
      prompt: "You help Ann in Oslo. ${unknown} stays.",
      openingText: "Hello Ann!",
    });
  });

  it("400 listing the missing required dynamic variables, and no session", async () => {
    const { avatar } = fullSetup();
    const context = world.context({ prompt: "${b} ${a} ${c}", requiredDynamicVariables: ["a", "b", "c"] });
    const request = fullRequest(avatar.id, {
      avatarPersona: { contextId: context.id },
      dynamicVariables: vars({ b: "1" }),
    });
    await rejects(
      mint(request),
      Code.InvalidArgument,
      "dynamic_variables",
      /Missing required dynamic variables: a, c$/,
    );
    expect(world.sessions).toHaveLength(0);
  });

  it("uses the named voice, language and settings", async () => {
    const { avatar } = fullSetup();
    const voice = world.voice({ voiceEngines: ["vendorE"] });
    await mint(
      fullRequest(avatar.id, {
        avatarPersona: {
          voiceId: voice.id,
          language: "es",
          voiceSettings: {
            provider: { case: "vendorE", value: { speed: 1.1, model: "s2", latencyMode: "low" } },
          },
          sttConfig: { provider: "sttvendor2" },
          llmSettings: { provider: "vendorB", model: "gpt-4o" },
        },
        interactivityType: InteractivityType.PUSH_TO_TALK,
      }),
    );
    expect(lastSession()?.config).toMatchObject({
      voiceId: voice.id,
      language: "es",
      sttConfig: { provider: "sttvendor2" },
      llmSettings: { model: "gpt-4o" },
      interactivityType: InteractivityType.PUSH_TO_TALK,
      voiceSettings: { provider: { case: "vendorE", value: { speed: 1.1, latencyMode: "low" } } },
    });
  });

  it("404 for unknown voice, context and LLM configuration, naming the field", async () => {
    const { avatar } = fullSetup();
    const missing = "66666666-6666-4666-8666-666666666666";
    await rejects(
      mint(fullRequest(avatar.id, { avatarPersona: { voiceId: missing } })),
      Code.NotFound,
      "avatar_persona.voice_id",
    );
    await rejects(
      mint(fullRequest(avatar.id, { avatarPersona: { contextId: missing } })),
      Code.NotFound,
      "avatar_persona.context_id",
    );
    await rejects(
      mint(fullRequest(avatar.id, { llmConfigurationId: missing })),
      Code.NotFound,
      "llm_configuration_id",
    );
    const theirs = world.llmConfiguration(OTHER_SPACE);
    await rejects(
      mint(fullRequest(avatar.id, { llmConfigurationId: theirs.id })),
      Code.NotFound,
      "llm_configuration_id",
    );
    const privateContext = world.context({ spaceId: OTHER_SPACE });
    await rejects(
      mint(fullRequest(avatar.id, { avatarPersona: { contextId: privateContext.id } })),
      Code.NotFound,
      "avatar_persona.context_id",
    );
    expect(world.sessions).toHaveLength(0);
  });

  it("takes the space's own LLM configuration", async () => {
    const { avatar } = fullSetup();
    const mine = world.llmConfiguration();
    await mint(fullRequest(avatar.id, { llmConfigurationId: mine.id }));
    expect(lastSession()?.config?.llmConfigurationId).toBe(mine.id);
  });

  it("400 when the avatar has no default voice and none is named", async () => {
    const avatar = world.avatar();
    await rejects(
      mint(fullRequest(avatar.id)),
      Code.InvalidArgument,
      "avatar_persona.voice_id",
      /no default voice/,
    );
  });

  it("400 for voice settings of an engine the voice does not have", async () => {
    const voice = world.voice({ voiceEngines: ["vendorA", "vendorD"] });
    const avatar = world.avatar({ defaultVoice: { id: voice.id } });
    const request = fullRequest(avatar.id, {
      avatarPersona: { voiceSettings: { provider: { case: "vendorE", value: { speed: 1 } } } },
    });
    await rejects(mint(request), Code.InvalidArgument, "avatar_persona.voice_settings.provider", /vendorE/);
  });

  it("language text normalization only for ja", async () => {
    const { avatar } = fullSetup();
    const persona = (language: string) => ({
      avatarPersona: {
        language,
        voiceSettings: {
          provider: { case: "vendorA" as const, value: { applyLanguageTextNormalization: true } },
        },
      },
    });
    await rejects(
      mint(fullRequest(avatar.id, persona("en"))),
      Code.InvalidArgument,
      "avatar_persona.voice_settings.apply_language_text_normalization",
    );
    await expect(mint(fullRequest(avatar.id, persona("ja")))).resolves.toBeDefined();
  });

  it("400 for a language the catalog does not list", async () => {
    const { avatar } = fullSetup();
    await rejects(
      mint(fullRequest(avatar.id, { avatarPersona: { language: "xx" } })),
      Code.InvalidArgument,
      "avatar_persona.language",
    );
  });
});

describe("request-only rules", () => {
  it("avatar_persona and voice_agent together -> 400 before any lookup", async () => {
    const { avatar } = fullSetup();
    const request = fullRequest(avatar.id, { avatarPersona: {}, voiceAgent: { id: avatar.id } });
    await rejects(mint(request), Code.InvalidArgument, "voice_agent", /mutually exclusive/);
    expect(world.calls).toEqual([]);
  });

  it("top-level and reference dynamic_variables together -> 400 (even empty ones)", async () => {
    const { avatar } = fullSetup();
    const request = fullRequest(avatar.id, {
      voiceAgent: { id: avatar.id, dynamicVariables: vars({}) },
      dynamicVariables: vars({}),
    });
    await rejects(mint(request), Code.InvalidArgument, "dynamic_variables");
    expect(world.calls).toEqual([]);
  });

  it("an unspecified mode is refused", async () => {
    const { avatar } = fullSetup();
    await rejects(mint({ avatarId: avatar.id }), Code.InvalidArgument, "mode");
  });
});

describe("voice agents", () => {
  function managed(more: Record<string, unknown> = {}) {
    return world.agent({
      agentType: AgentType.MANAGED_AGENT,
      agentConfiguration: { configuration: { case: "managed", value: { ...more } } },
    });
  }

  it("404 for an unknown agent and another space's private one", async () => {
    const { avatar } = fullSetup();
    await rejects(
      mint(fullRequest(avatar.id, { voiceAgent: { id: "77777777-7777-4777-8777-777777777777" } })),
      Code.NotFound,
      "voice_agent.id",
    );
    const theirs = world.agent({
      spaceId: OTHER_SPACE,
      agentType: AgentType.MANAGED_AGENT,
      agentConfiguration: { configuration: { case: "managed", value: {} } },
    });
    await rejects(
      mint(fullRequest(avatar.id, { voiceAgent: { id: theirs.id } })),
      Code.NotFound,
      "voice_agent.id",
    );
  });

  it("a managed agent runs FULL with the reference's overrides over its stored values, for this session", async () => {
    const { avatar } = fullSetup();
    const voice = world.voice();
    const context = world.context({
      prompt: "${greeting} ${name}",
      requiredDynamicVariables: ["greeting", "name"],
    });
    const agent = managed({
      voiceId: voice.id,
      contextId: context.id,
      language: "es",
      dynamicVariables: vars({ greeting: "Hola", name: "stored" }),
    });
    await mint(
      fullRequest(avatar.id, {
        voiceAgent: { id: agent.id, language: "ja", dynamicVariables: vars({ name: "Ann" }) },
      }),
    );
    expect(lastSession()?.config).toMatchObject({
      mode: SessionMode.FULL,
      voiceAgentId: agent.id,
      agentType: AgentType.MANAGED_AGENT,
      voiceId: voice.id,
      language: "ja",
      prompt: "Hola Ann",
      llmSettings: { provider: "vendorB", model: "gpt-5.4-nano" },
    });
    // The stored agent is untouched: the next session without overrides gets the stored values.
    await mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id } }));
    expect(lastSession()?.config).toMatchObject({ language: "es", prompt: "Hola stored" });
  });

  it("top-level dynamic_variables fill a managed agent's context when the reference has none", async () => {
    const { avatar } = fullSetup();
    const context = world.context({ prompt: "${name}", requiredDynamicVariables: ["name"] });
    const agent = managed({ contextId: context.id });
    await rejects(
      mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id } })),
      Code.InvalidArgument,
      "dynamic_variables",
      /name/,
    );
    await mint(
      fullRequest(avatar.id, { voiceAgent: { id: agent.id }, dynamicVariables: vars({ name: "Bo" }) }),
    );
    expect(lastSession()?.config?.prompt).toBe("Bo");
  });

  it("a managed agent's reference variables must be strings, within the limits (400)", async () => {
    const { avatar } = fullSetup();
    const agent = managed();
    const ref = (values: Record<string, ReturnType<typeof str>>) =>
      fullRequest(avatar.id, { voiceAgent: { id: agent.id, dynamicVariables: { values } } });
    await rejects(
      mint(ref({ n: num(3) })),
      Code.InvalidArgument,
      "voice_agent.dynamic_variables.n",
      /must be a string/,
    );
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, str("v")]));
    await rejects(mint(ref(many)), Code.InvalidArgument, "voice_agent.dynamic_variables", /at most 50/);
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, str("v")]));
    await expect(mint(ref(fifty))).resolves.toBeDefined();
    await rejects(
      mint(ref({ ["k".repeat(65)]: str("v") })),
      Code.InvalidArgument,
      "voice_agent.dynamic_variables",
    );
    await expect(mint(ref({ ["k".repeat(64)]: str("v") }))).resolves.toBeDefined();
    await rejects(
      mint(ref({ k: str("v".repeat(1001)) })),
      Code.InvalidArgument,
      "voice_agent.dynamic_variables.k",
    );
    await expect(mint(ref({ k: str("v".repeat(1000)) }))).resolves.toBeDefined();
  });

  it("a vendorA agent produces a LITE session even on a FULL request", async () => {
    const { avatar } = fullSetup();
    const secret = world.secret(SecretType.VENDORA_API_KEY);
    const agent = world.agent({
      agentType: AgentType.VENDOR_A_AGENT,
      agentConfiguration: {
        configuration: { case: "vendorA", value: { secretId: secret.id, agentId: "agent-1" } },
      },
    });
    const minted = await mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id } }));
    expect(lastSession()?.config).toMatchObject({
      mode: SessionMode.LITE,
      agentType: AgentType.VENDOR_A_AGENT,
      lite: { vendorAAgent: { secretId: secret.id, agentId: "agent-1" } },
    });
    expect(lastSession()?.session.mode).toBe(SessionMode.LITE);
    const claims = decodeJwt(minted.sessionToken);
    expect(claims.start_session_data).toMatchObject({ mode: "LITE", agent_type: "vendorA_agent" });
    expect(JSON.stringify(claims)).not.toContain(secret.id);
  });

  it("a vendorA agent rejects language and dynamic_variables overrides (400)", async () => {
    const { avatar } = fullSetup();
    const agent = world.agent({
      agentType: AgentType.VENDOR_A_AGENT,
      agentConfiguration: {
        configuration: { case: "vendorA", value: { secretId: avatar.id, agentId: "a" } },
      },
    });
    await rejects(
      mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id, language: "en" } })),
      Code.InvalidArgument,
      "voice_agent.language",
    );
    await rejects(
      mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id, dynamicVariables: vars({ a: "b" }) } })),
      Code.InvalidArgument,
      "voice_agent.dynamic_variables",
    );
    await rejects(
      mint(
        fullRequest(avatar.id, { voiceAgent: { id: agent.id }, memory: { sessionMemoryId: world.memory() } }),
      ),
      Code.InvalidArgument,
      "memory",
    );
    expect(world.sessions).toHaveLength(0);
  });

  it("a vendorB agent runs LITE on its realtime configuration with its context filled", async () => {
    const { avatar } = fullSetup();
    const context = world.context({ prompt: "Talk to ${name}", requiredDynamicVariables: ["name"] });
    const agent = world.agent({
      agentType: AgentType.VENDOR_B_AGENT,
      agentConfiguration: {
        configuration: {
          case: "vendorB",
          value: {
            model: "gpt-realtime",
            voice: "ash",
            temperature: 0.9,
            secretId: avatar.id,
            contextId: context.id,
          },
        },
      },
    });
    await mint(
      fullRequest(avatar.id, { voiceAgent: { id: agent.id }, dynamicVariables: vars({ name: "Ann" }) }),
    );
    expect(lastSession()?.config).toMatchObject({
      mode: SessionMode.LITE,
      agentType: AgentType.VENDOR_B_AGENT,
      lite: { vendorBRealtime: { model: "gpt-realtime", voice: "ash", temperature: 0.9 } },
      prompt: "Talk to Ann",
    });
  });

  it("a vendorB agent stored without voice or temperature gets its family's defaults", async () => {
    const { avatar } = fullSetup();
    const stored = (model: string) =>
      world.agent({
        agentType: AgentType.VENDOR_B_AGENT,
        agentConfiguration: { configuration: { case: "vendorB", value: { model, secretId: avatar.id } } },
      });
    await mint(fullRequest(avatar.id, { voiceAgent: { id: stored("gpt-live-1").id } }));
    expect(lastSession()?.config?.lite?.vendorBRealtime).toMatchObject({ voice: "marin", temperature: 0 });
    await mint(fullRequest(avatar.id, { voiceAgent: { id: stored("").id } }));
    expect(lastSession()?.config?.lite?.vendorBRealtime).toMatchObject({
      model: "gpt-realtime",
      voice: "alloy",
      temperature: 0.8,
    });
  });

  it("a vendorD agent runs LITE", async () => {
    const { avatar } = fullSetup();
    const agent = world.agent({
      agentType: AgentType.VENDOR_D_AGENT,
      agentConfiguration: {
        configuration: { case: "vendorD", value: { secretId: avatar.id, agentId: "d" } },
      },
    });
    await mint(fullRequest(avatar.id, { voiceAgent: { id: agent.id } }));
    expect(lastSession()?.config).toMatchObject({
      mode: SessionMode.LITE,
      lite: { vendorDAgent: { agentId: "d" } },
    });
  });
});

describe("memory", () => {
  it("404 naming the field for an unknown session or memory, or another space's memory", async () => {
    const { avatar } = fullSetup();
    const unknown = "88888888-8888-4888-8888-888888888888";
    await rejects(
      mint(fullRequest(avatar.id, { memory: { prevSessionId: unknown } })),
      Code.NotFound,
      "memory.prev_session_id",
    );
    await rejects(
      mint(fullRequest(avatar.id, { memory: { sessionMemoryId: unknown } })),
      Code.NotFound,
      "memory.session_memory_id",
    );
    const theirs = world.memory(OTHER_SPACE);
    await rejects(
      mint(fullRequest(avatar.id, { memory: { sessionMemoryId: theirs } })),
      Code.NotFound,
      "memory.session_memory_id",
    );
    expect(world.sessions).toHaveLength(0);
  });

  it("attaches the memory the ids resolve to", async () => {
    const { avatar } = fullSetup();
    const prev = "99999999-9999-4999-8999-999999999999";
    const memoryId = world.memory(SPACE, prev);
    await mint(fullRequest(avatar.id, { memory: { prevSessionId: prev, sessionMemoryId: memoryId } }));
    expect(lastSession()?.config?.memoryId).toBe(memoryId);
    await mint(fullRequest(avatar.id, { memory: { sessionMemoryId: memoryId } }));
    expect(lastSession()?.config?.memoryId).toBe(memoryId);
  });

  it("400 when the two ids resolve to different memories", async () => {
    const { avatar } = fullSetup();
    const prev = "aaaaaaaa-9999-4999-8999-999999999999";
    world.memory(SPACE, prev);
    const other = world.memory(SPACE);
    await rejects(
      mint(fullRequest(avatar.id, { memory: { prevSessionId: prev, sessionMemoryId: other } })),
      Code.InvalidArgument,
      "memory",
      /different memories/,
    );
    expect(world.sessions).toHaveLength(0);
  });

  it("is resolved only after every other check passed", async () => {
    const { avatar } = fullSetup({ sandboxEnabled: false });
    const prev = "bbbbbbbb-9999-4999-8999-999999999999";
    world.endedFullSessions.add(prev);
    await rejects(
      mint(fullRequest(avatar.id, { isSandbox: true, memory: { prevSessionId: prev } })),
      Code.InvalidArgument,
      "is_sandbox",
    );
    expect(world.calls).not.toContain("memory.resolveMemory");
  });
});

describe("LITE requests", () => {
  const lite = (
    avatarId: string,
    configs: NonNullable<RequestInit["lite"]>,
    more: RequestInit = {},
  ): RequestInit => ({
    mode: SessionMode.LITE,
    avatarId,
    lite: configs,
    ...more,
  });

  it("stores the configuration as sent, with the space's secret of the right type", async () => {
    const { avatar } = fullSetup();
    const secret = world.secret(SecretType.VENDORA_API_KEY);
    const minted = await mint(
      lite(avatar.id, {
        vendorAAgent: { secretId: secret.id, agentId: "agent-9", voiceId: "v" },
        transportA: {
          transportAUrl: "wss://a",
          transportARoom: "room",
          transportAClientToken: "client-secret",
        },
      }),
    );
    expect(lastSession()?.config).toMatchObject({
      mode: SessionMode.LITE,
      lite: {
        vendorAAgent: { secretId: secret.id, agentId: "agent-9" },
        transportA: { transportARoom: "room" },
      },
    });
    const text = JSON.stringify(decodeJwt(minted.sessionToken));
    expect(text).not.toContain(secret.id);
    expect(text).not.toContain("client-secret");
  });

  it.each([
    ["vendorAAgent", "vendorA_agent_config.secret_id", SecretType.VENDORA_API_KEY, { agentId: "a" }],
    ["vendorDAgent", "vendorD_agent_config.secret_id", SecretType.VENDORD_API_KEY, { agentId: "d" }],
    [
      "vendorBRealtime",
      "vendorB_realtime_config.secret_id",
      SecretType.VENDORB_API_KEY,
      { model: "gpt-realtime" },
    ],
    ["vendorCRealtime", "vendorC_realtime_config.secret_id", SecretType.VENDORC_API_KEY, { voice: "Puck" }],
  ] as const)(
    "%s: unknown or foreign secret 404, other type 400, own 200",
    async (key, field, type, rest) => {
      const { avatar } = fullSetup();
      const request = (secretId: string) => lite(avatar.id, { [key]: { secretId, ...rest } });
      await rejects(mint(request("cccccccc-9999-4999-8999-999999999999")), Code.NotFound, field);
      await rejects(mint(request(world.secret(type, OTHER_SPACE).id)), Code.NotFound, field);
      await rejects(
        mint(request(world.secret(SecretType.VENDORE_API_KEY).id)),
        Code.InvalidArgument,
        field,
        /VENDORE_API_KEY/,
      );
      expect(world.sessions).toHaveLength(0);
      await mint(request(world.secret(type).id));
      expect(world.sessions).toHaveLength(1);
    },
  );

  it("a realtime configuration's context: 404 when unknown, 400 when it needs variables", async () => {
    const { avatar } = fullSetup();
    const secret = world.secret(SecretType.VENDORC_API_KEY);
    const request = (contextId: string) =>
      lite(avatar.id, { vendorCRealtime: { secretId: secret.id, contextId } });
    await rejects(
      mint(request("dddddddd-9999-4999-8999-999999999999")),
      Code.NotFound,
      "vendorC_realtime_config.context_id",
    );
    const needy = world.context({ prompt: "${x}", requiredDynamicVariables: ["x"] });
    await rejects(mint(request(needy.id)), Code.InvalidArgument, "dynamic_variables", /x/);
    const plain = world.context({ prompt: "Be kind", openingText: "Hi" });
    await mint(request(plain.id));
    expect(lastSession()?.config).toMatchObject({
      contextId: plain.id,
      prompt: "Be kind",
      openingText: "Hi",
    });
  });

  it("400 for two agent configurations", async () => {
    const { avatar } = fullSetup();
    const a = world.secret(SecretType.VENDORA_API_KEY).id;
    const d = world.secret(SecretType.VENDORD_API_KEY).id;
    await rejects(
      mint(
        lite(avatar.id, {
          vendorAAgent: { secretId: a, agentId: "a" },
          vendorDAgent: { secretId: d, agentId: "d" },
        }),
      ),
      Code.InvalidArgument,
      "vendorD_agent_config",
    );
    expect(world.calls).toEqual([]);
  });

  it("400 for transportB, which this deployment does not have, alone, with transportA or on a FULL request", async () => {
    const { avatar } = fullSetup();
    const transportB = {
      transportBAppId: "a",
      transportBToken: "t",
      transportBChannel: "c",
      transportBUid: "u",
    };
    const refused = /^transportB_config: transportB is not available in this deployment$/;
    const sessionsBefore = world.sessions.length;
    await rejects(mint(lite(avatar.id, { transportB })), Code.InvalidArgument, "transportB_config", refused);
    await rejects(
      mint(
        lite(avatar.id, {
          transportA: { transportAUrl: "wss://u", transportARoom: "r", transportAClientToken: "t" },
          transportB,
        }),
      ),
      Code.InvalidArgument,
      "transportB_config",
      refused,
    );
    await rejects(
      mint({ ...fullRequest(avatar.id), lite: { transportB } }),
      Code.InvalidArgument,
      "transportB_config",
      refused,
    );
    expect(world.calls).toEqual([]);
    expect(world.sessions).toHaveLength(sessionsBefore);
  });

  it("a LITE session without agent configuration animates the avatar for the caller's own audio", async () => {
    const { avatar } = fullSetup();
    await mint(lite(avatar.id, {}));
    expect(lastSession()?.config).toMatchObject({ mode: SessionMode.LITE, voiceId: "" });
  });
});

describe("max_session_duration", () => {
  async function durationIssues(p: Promise<unknown>) {
    const err = await failure(p);
    expect(err.code).toBe(Code.InvalidArgument);
    return (errorDetailOf(err)?.issues ?? []).map(issueToJson);
  }

  it("defaults to the space's limit and may equal it", async () => {
    const { avatar } = fullSetup();
    await mint(fullRequest(avatar.id));
    expect(lastSession()?.session.maxSessionDuration).toBe(600);
    await mint(fullRequest(avatar.id, { maxSessionDuration: 600 }));
    expect(lastSession()?.session.maxSessionDuration).toBe(600);
    await mint(fullRequest(avatar.id, { maxSessionDuration: 1 }));
    expect(lastSession()?.session.maxSessionDuration).toBe(1);
  });

  it("over the limit is a 422 entry in pydantic's words, before any lookup", async () => {
    const { avatar } = fullSetup();
    expect(await durationIssues(mint(fullRequest(avatar.id, { maxSessionDuration: 601 })))).toEqual([
      {
        loc: ["body", "max_session_duration"],
        msg: "Input should be less than or equal to 600",
        type: "less_than_equal",
        input: 601,
        ctx: { le: 600 },
      },
    ]);
    expect(world.calls).toEqual([]);
    expect(world.sessions).toHaveLength(0);
  });

  it("follows the space's own limit", async () => {
    const { avatar } = fullSetup({ spaceId: OTHER_SPACE });
    expect(
      await durationIssues(mint(fullRequest(avatar.id, { maxSessionDuration: 901 }), OTHER_SPACE)),
    ).toMatchObject([{ msg: "Input should be less than or equal to 900", ctx: { le: 900 }, input: 901 }]);
    await mint(fullRequest(avatar.id, { maxSessionDuration: 900 }), OTHER_SPACE);
    expect(lastSession()?.session.maxSessionDuration).toBe(900);
  });

  it("a sandbox session is capped at 60 s whatever was asked, and its token lives accordingly", async () => {
    const { avatar } = fullSetup({ sandboxEnabled: true });
    const minted = await mint(fullRequest(avatar.id, { isSandbox: true, maxSessionDuration: 500 }));
    expect(lastSession()?.session.maxSessionDuration).toBe(60);
    expect(decodeJwt(minted.sessionToken).exp).toBe(NOW_S + 600 + 60 + 300);
    await mint(fullRequest(avatar.id, { isSandbox: true }));
    expect(lastSession()?.session.maxSessionDuration).toBe(60);
    await expect(
      durationIssues(mint(fullRequest(avatar.id, { isSandbox: true, maxSessionDuration: 601 }))),
    ).resolves.toHaveLength(1);
  });

  it("zero or less is refused for callers other than the gateway too", async () => {
    const { avatar } = fullSetup();
    expect(await durationIssues(mint(fullRequest(avatar.id, { maxSessionDuration: 0 })))).toMatchObject([
      { type: "greater_than_equal", ctx: { ge: 1 } },
    ]);
  });
});

describe("token claims", () => {
  it("a non-sandbox token carries no secret ids, prompts or dynamic-variable values", async () => {
    const { avatar } = fullSetup({ sandboxEnabled: true });
    const context = world.context({
      prompt: "PROMPT-TEXT ${v}",
      openingText: "OPENING-TEXT",
      requiredDynamicVariables: ["v"],
    });
    const llm = world.llmConfiguration();
    const request = fullRequest(avatar.id, {
      avatarPersona: { contextId: context.id },
      dynamicVariables: vars({ v: "VARIABLE-VALUE" }),
      llmConfigurationId: llm.id,
    });
    const plain = JSON.stringify(decodeJwt((await mint(request)).sessionToken));
    for (const secret of ["PROMPT-TEXT", "OPENING-TEXT", "VARIABLE-VALUE", llm.id, context.id]) {
      expect(plain).not.toContain(secret);
    }

    const sandbox = decodeJwt((await mint({ ...request, isSandbox: true })).sessionToken);
    const resolved = (sandbox.start_session_data as { resolved: Record<string, unknown> }).resolved;
    expect(resolved).toMatchObject({
      mode: "SESSION_MODE_FULL",
      prompt: "PROMPT-TEXT VARIABLE-VALUE",
      llm_configuration_id: llm.id,
      dynamic_variables: { values: { v: "VARIABLE-VALUE" } },
    });
  });

  it("a sandbox token shows secret ids but not the caller's transport tokens", async () => {
    const { avatar } = fullSetup({ sandboxEnabled: true });
    const secret = world.secret(SecretType.VENDORB_API_KEY);
    const minted = await mint({
      mode: SessionMode.LITE,
      avatarId: avatar.id,
      isSandbox: true,
      lite: {
        vendorBRealtime: { secretId: secret.id, model: "gpt-realtime", voice: "alloy", temperature: 0.8 },
        transportA: {
          transportAUrl: "wss://caller.example/",
          transportARoom: "their-room",
          transportAClientToken: "TRANSPORT-TOKEN",
        },
      },
    });
    const text = JSON.stringify(decodeJwt(minted.sessionToken));
    expect(text).toContain(secret.id);
    expect(text).not.toContain("TRANSPORT-TOKEN");
    expect(text).toContain('"transport_a_room":"their-room"');
  });

  it("the stored config keeps dynamic variables as strings", async () => {
    const { avatar } = fullSetup();
    await mint(fullRequest(avatar.id, { dynamicVariables: vars({ a: "1" }) }));
    const dv = lastSession()?.config?.dynamicVariables?.values ?? {};
    expect(Object.fromEntries(Object.entries(dv).map(([k, v]) => [k, toJson(ValueSchema, v)]))).toEqual({
      a: "1",
    });
  });
});

describe("failure after the record is written", () => {
  it("ends the session and hands out no token", async () => {
    const { avatar } = fullSetup();
    world.failCreateAfterWrite = new ConnectError("deadline", Code.DeadlineExceeded);
    const err = await failure(mint(fullRequest(avatar.id)));
    expect(err.code).toBe(Code.DeadlineExceeded);
    expect(world.sessions).toHaveLength(1);
    expect(world.ended).toEqual([world.sessions[0]?.session.id]);
    expect(world.sessions[0]?.session.endReason).toBe(SessionEndReason.SERVER_ERROR);
  });

  it("a signature that fails ends the session, once its creation has written it", async () => {
    const { avatar } = fullSetup();
    let signatureFailed!: () => void;
    const afterSignature = new Promise<void>((resolve) => {
      signatureFailed = resolve;
    });
    const deps = mintDeps(fixture, world);
    const err = await failure(
      mint(fullRequest(avatar.id), SPACE, {
        signer: {
          now: () => clockMs,
          signing: async () => () => {
            signatureFailed();
            throw new ConnectError("the key is unusable", Code.Internal);
          },
        },
        // The record is written only after the signature failed.
        createSession: async (r) => {
          await afterSignature;
          await deps.clients.sessions.createSession(r);
        },
      }),
    );
    expect(err.message).toContain("the key is unusable");
    expect(world.sessions).toHaveLength(1);
    expect(world.ended).toEqual([world.sessions[0]?.session.id]);
  });

  it("a signing key that cannot be found creates no session", async () => {
    const { avatar } = fullSetup();
    const err = await failure(
      mint(fullRequest(avatar.id), SPACE, {
        signer: {
          now: () => clockMs,
          signing: () => Promise.reject(new ConnectError("no database", Code.Unavailable)),
        },
      }),
    );
    expect(err.code).toBe(Code.Unavailable);
    expect(world.sessions).toHaveLength(0);
    expect(world.ended).toEqual([]);
  });
});
