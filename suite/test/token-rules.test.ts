// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what these tests are about
/**
 * POST /v1/sessions/token over real HTTP on the whole suite, with the real catalog, agents, memory and
 * sessions services: every 400 and 404 rule (interface.md rules 1-7, contract section 4), no session left
 * by a rejected request, the credential rules and the token's claims.
 */
import { randomUUID } from "node:crypto";
import { SecretType } from "@avatar/contracts/agents";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { AgentType, SessionMode } from "@avatar/contracts/common";
import { MemoryType } from "@avatar/contracts/memory";
import { Tier } from "@avatar/contracts/tokens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";
import {
  ADA,
  BEN,
  CHLOE,
  claimsOf,
  expect422,
  expectError,
  KeyRing,
  PUBLIC_AVATAR,
  postToken,
  sessionCount,
  TOKEN_PATH,
} from "./token-support.js";

let suite: TestSuite;
let keys: KeyRing;
let other: { spaceId: string; apiKey: string };

beforeAll(async () => {
  suite = await startTestSuite();
  keys = new KeyRing(suite);
  const apiKey = `lak_test_${randomUUID().replaceAll("-", "")}`;
  const created = await suite.clients.tokens.createSpace({ name: "Other", tier: Tier.FREE, apiKey });
  other = { spaceId: created.space?.id ?? "", apiKey };
  await suite.clients.sessions.grantCredits({
    spaceId: suite.spaceId,
    amount: "1000",
    note: "token tests",
    idempotencyKey: "token-rules",
  });
});
afterAll(async () => {
  await suite?.stop();
});

const post = (body: unknown) => postToken(suite, keys, body);
const full = (more: Record<string, unknown> = {}) => ({ avatar_id: ADA.id, ...more });
const unknownId = () => randomUUID();

/** A rejected request: the status, the envelope, and no new session. */
async function rejected(body: unknown, status: number, message?: RegExp): Promise<string> {
  const before = await sessionCount(suite);
  const text = await expectError(await post(body), status);
  if (message) expect(text).toMatch(message);
  expect(await sessionCount(suite)).toBe(before);
  return text;
}

async function minted(body: unknown): Promise<{ session_id: string; session_token: string }> {
  const res = await post(body);
  const payload = await json(res);
  expect({ status: res.status, payload }).toMatchObject({ status: 200, payload: { code: 100 } });
  return payload.data;
}

async function configOf(sessionId: string) {
  return (await suite.clients.sessions.getSessionConfig({ sessionId })).config;
}

async function importAvatar(init: {
  status?: AvatarStatus;
  spaceId?: string;
  sandboxEnabled?: boolean;
  is1080p?: boolean;
}) {
  const id = randomUUID();
  await suite.clients.catalog.importAvatars({
    avatars: [
      {
        id,
        spaceId: init.spaceId ?? suite.spaceId,
        name: "Imported",
        type: "VIDEO",
        status: init.status ?? AvatarStatus.ACTIVE,
        defaultVoice: { id: ADA.default_voice_id ?? "" },
        sandboxEnabled: init.sandboxEnabled ?? false,
        is1080p: init.is1080p ?? false,
      },
    ],
  });
  return id;
}

async function context(prompt: string, openingText = "", spaceId = suite.spaceId) {
  const res = await suite.clients.agents.createContext({ spaceId, name: "ctx", prompt, openingText });
  return res.context?.id ?? "";
}

async function secret(type: SecretType, spaceId = suite.spaceId) {
  const res = await suite.clients.agents.createSecret({
    spaceId,
    secretName: "provider key",
    secretValue: "sk-secret-value-0123456789",
    secretType: type,
    allowedHosts: ["127.0.0.1"],
  });
  return res.secret?.id ?? "";
}

type Configuration = Parameters<TestSuite["clients"]["agents"]["createVoiceAgent"]>[0]["agentConfiguration"];

async function voiceAgent(agentType: AgentType, agentConfiguration: Configuration, spaceId = suite.spaceId) {
  const res = await suite.clients.agents.createVoiceAgent({
    spaceId,
    name: "agent",
    agentType,
    agentConfiguration,
  });
  return res.voiceAgent?.id ?? "";
}

describe("credentials", () => {
  it("needs an API key: none is 401, a session token is 403", async () => {
    const session = await minted(full());
    await expectError(await suite.request("POST", TOKEN_PATH, { body: full() }), 401);
    const message = await expectError(
      await suite.request("POST", TOKEN_PATH, {
        headers: { Authorization: `Bearer ${session.session_token}` },
        body: full(),
      }),
      403,
    );
    expect(message).toMatch(/API key/);
    await expectError(
      await suite.request("POST", TOKEN_PATH, { headers: { "X-API-KEY": "lak_nope" }, body: full() }),
      401,
    );
  });

  it("allows 10 requests per second per key; the 11th is 429 and creates nothing", async () => {
    const key = (await suite.clients.tokens.createApiKey({ spaceId: suite.spaceId, name: "burst" }))
      .apiKeySecret;
    const before = await sessionCount(suite);
    await atNextSecond();
    const responses = await Promise.all(
      Array.from({ length: 11 }, () =>
        suite.request("POST", TOKEN_PATH, { headers: { "X-API-KEY": key }, body: full() }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    // A slow machine may spill the burst over a window boundary; then fewer are limited, never more.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
    const limited = responses.filter((r) => r.status === 429);
    for (const r of limited)
      expect(await json(r)).toEqual({ code: 4290, data: null, message: "Rate limit exceeded" });
    expect(await sessionCount(suite)).toBe(before + 11 - limited.length);
    expect(responses[0]?.headers.get("x-ratelimit-limit")).toBe("10");
  });
});

describe("description", () => {
  it("the OpenAPI document describes both body shapes", async () => {
    const doc = await json(await suite.get("/openapi.json"));
    const op = doc.paths["/v1/sessions/token"].post;
    expect(op.security).toEqual([{ ApiKey: [] }]);
    expect(op.requestBody.content["application/json"].schema.oneOf).toEqual([
      { $ref: "#/components/schemas/FullSessionTokenRequest" },
      { $ref: "#/components/schemas/LiteSessionTokenRequest" },
    ]);
    expect(doc.components.schemas.FullSessionTokenRequest.required).toEqual(["avatar_id"]);
    expect(doc.components.schemas.VendorAVoiceSettings.properties.speed).toMatchObject({
      minimum: 0.8,
      maximum: 1.2,
      default: 1,
    });
  });
});

describe("claims", () => {
  it("a non-sandbox token names its session and holds only non-sensitive fields", async () => {
    const ctx = await context("SECRET-PROMPT ${who}", "OPENING ${who}");
    const llmSecret = await secret(SecretType.VENDORB_API_KEY);
    const llm = await suite.clients.agents.createLlmConfiguration({
      spaceId: suite.spaceId,
      displayName: "mine",
      modelName: "m",
      secretId: llmSecret,
      baseUrl: "http://127.0.0.1:9/v1",
    });
    const session = await minted(
      full({
        avatar_persona: { context_id: ctx },
        dynamic_variables: { who: "VARIABLE-VALUE" },
        llm_configuration_id: llm.llmConfiguration?.id,
      }),
    );
    const claims = claimsOf(session.session_token);
    expect(claims).toMatchObject({
      sub: session.session_id,
      space_id: suite.spaceId,
      api_key_id: expect.any(String),
      exp: expect.any(Number),
      start_session_data: {
        mode: "FULL",
        avatar_id: ADA.id,
        is_sandbox: false,
        video_settings: { quality: "high", encoding: "H264" },
        interactivity_type: "CONVERSATIONAL",
        agent_type: null,
      },
    });
    const text = JSON.stringify(claims);
    for (const hidden of [
      "SECRET-PROMPT",
      "OPENING",
      "VARIABLE-VALUE",
      llmSecret,
      llm.llmConfiguration?.id ?? "x",
      ctx,
    ]) {
      expect(text).not.toContain(hidden);
    }
    // Lifetime: start window (10 min) + max_session_duration (pro: 3600 s) + 5 min.
    expect(claims.exp - claims.iat).toBe(600 + 3600 + 300);
    const config = await configOf(session.session_id);
    expect(config).toMatchObject({
      prompt: "SECRET-PROMPT VARIABLE-VALUE",
      openingText: "OPENING VARIABLE-VALUE",
    });
  });

  it("a sandbox token adds the resolved configuration, without secret values", async () => {
    const key = await secret(SecretType.VENDORA_API_KEY);
    const session = await minted({
      mode: "LITE",
      avatar_id: ADA.id,
      is_sandbox: true,
      vendorA_agent_config: { secret_id: key, agent_id: "agent-7" },
      transportA_config: {
        transportA_url: "wss://x",
        transportA_room: "room",
        transportA_client_token: "CLIENT-TOKEN",
      },
    });
    const claims = claimsOf(session.session_token);
    expect(claims.start_session_data.resolved).toMatchObject({
      mode: "SESSION_MODE_LITE",
      lite: {
        vendor_a_agent: { secret_id: key, agent_id: "agent-7" },
        transport_a: { transport_a_room: "room" },
      },
    });
    const text = JSON.stringify(claims);
    expect(text).not.toContain("sk-secret-value");
    expect(text).not.toContain("CLIENT-TOKEN");
  });
});

describe("avatar rules", () => {
  it("404 for an unknown avatar and for another space's private one; public avatars are usable", async () => {
    expect(await rejected(full({ avatar_id: unknownId() }), 404)).toMatch(/Avatar/);
    const theirs = await importAvatar({ spaceId: other.spaceId });
    await rejected(full({ avatar_id: theirs }), 404);
    await minted(full({ avatar_id: PUBLIC_AVATAR.id }));
  });

  it("400 for a deactivated, deleted or initialising avatar", async () => {
    for (const status of [AvatarStatus.DEACTIVATED, AvatarStatus.DELETED, AvatarStatus.INIT]) {
      await rejected(full({ avatar_id: await importAvatar({ status }) }), 400);
    }
    const avatarId = await importAvatar({});
    await suite.clients.catalog.updateAvatar({ spaceId: suite.spaceId, avatarId, isDeactivated: true });
    await rejected(full({ avatar_id: avatarId }), 400, /DEACTIVATED/);
    await suite.clients.catalog.updateAvatar({ spaceId: suite.spaceId, avatarId, isDeactivated: false });
    await minted(full({ avatar_id: avatarId }));
  });

  it("sandbox needs a sandbox-enabled avatar", async () => {
    await rejected(full({ avatar_id: CHLOE.id, is_sandbox: true }), 400, /sandbox/);
    await minted(full({ avatar_id: ADA.id, is_sandbox: true }));
  });

  it("very_high needs a 1080p avatar", async () => {
    await rejected(full({ avatar_id: ADA.id, video_settings: { quality: "very_high" } }), 400, /1080p/);
    const session = await minted(full({ avatar_id: BEN.id, video_settings: { quality: "very_high" } }));
    expect(claimsOf(session.session_token).start_session_data.video_settings.quality).toBe("very_high");
  });
});

describe("persona and references", () => {
  it("avatar_persona with voice_agent is 400", async () => {
    await rejected(full({ avatar_persona: {}, voice_agent: { id: unknownId() } }), 400, /mutually exclusive/);
  });

  it("404 naming what was not found: voice, context, LLM configuration", async () => {
    expect(await rejected(full({ avatar_persona: { voice_id: unknownId() } }), 404)).toMatch(/Voice/);
    expect(await rejected(full({ avatar_persona: { context_id: unknownId() } }), 404)).toMatch(/Context/);
    expect(await rejected(full({ llm_configuration_id: unknownId() }), 404)).toMatch(/LLM configuration/);
    const theirs = await context("theirs", "", other.spaceId);
    await rejected(full({ avatar_persona: { context_id: theirs } }), 404);
  });

  it("missing required dynamic variables are listed (400); extra ones are ignored", async () => {
    const ctx = await context("Hi ${first} ${last}", "From ${city}");
    const message = await rejected(
      full({ avatar_persona: { context_id: ctx }, dynamic_variables: { first: "A" } }),
      400,
    );
    expect(message).toMatch(/city/);
    expect(message).toMatch(/last/);
    expect(message).not.toMatch(/first/);
    const session = await minted(
      full({
        avatar_persona: { context_id: ctx },
        dynamic_variables: { first: "A", last: "B", city: "C", extra: "D" },
      }),
    );
    expect(await configOf(session.session_id)).toMatchObject({ prompt: "Hi A B", openingText: "From C" });
  });

  it("defaults: the avatar's voice, en, vendorB gpt-5.4-nano", async () => {
    const session = await minted(full());
    expect(await configOf(session.session_id)).toMatchObject({
      voiceId: ADA.default_voice_id,
      language: "en",
      llmSettings: { provider: "vendorB", model: "gpt-5.4-nano" },
      voiceSettings: { provider: { case: "vendorA" } },
    });
  });
});

describe("voice agents", () => {
  it("404 for an unknown agent, or another space's private one", async () => {
    await rejected(full({ voice_agent: { id: unknownId() } }), 404, /Voice agent/);
    const theirs = await voiceAgent(
      AgentType.MANAGED_AGENT,
      { configuration: { case: "managed", value: {} } },
      other.spaceId,
    );
    await rejected(full({ voice_agent: { id: theirs } }), 404);
  });

  it("a vendorA agent gives a LITE session and takes no overrides (400)", async () => {
    const key = await secret(SecretType.VENDORA_API_KEY);
    const agent = await voiceAgent(AgentType.VENDOR_A_AGENT, {
      configuration: { case: "vendorA", value: { secretId: key, agentId: "el-agent" } },
    });
    const session = await minted(full({ mode: "FULL", voice_agent: { id: agent } }));
    expect(claimsOf(session.session_token).start_session_data).toMatchObject({
      mode: "LITE",
      agent_type: "vendorA_agent",
    });
    const { session: record } = await suite.clients.sessions.getSession({
      spaceId: suite.spaceId,
      sessionId: session.session_id,
    });
    expect(record?.mode).toBe(SessionMode.LITE);
    await rejected(full({ voice_agent: { id: agent, language: "es" } }), 400, /language/);
    await rejected(
      full({ voice_agent: { id: agent, dynamic_variables: { a: "b" } } }),
      400,
      /dynamic_variables/,
    );
  });

  it("a managed agent applies the overrides for this session only", async () => {
    const ctx = await context("Hello ${name}, speak ${tone}");
    const agent = await voiceAgent(AgentType.MANAGED_AGENT, {
      configuration: {
        case: "managed",
        value: {
          contextId: ctx,
          language: "es",
          dynamicVariables: {
            values: {
              name: { kind: { case: "stringValue", value: "Stored" } },
              tone: { kind: { case: "stringValue", value: "calmly" } },
            },
          },
        },
      },
    });
    const overridden = await minted(
      full({ voice_agent: { id: agent, language: "fr", dynamic_variables: { name: "Ann" } } }),
    );
    expect(await configOf(overridden.session_id)).toMatchObject({
      mode: SessionMode.FULL,
      agentType: AgentType.MANAGED_AGENT,
      language: "fr",
      prompt: "Hello Ann, speak calmly",
    });
    const plain = await minted(full({ voice_agent: { id: agent } }));
    expect(await configOf(plain.session_id)).toMatchObject({
      language: "es",
      prompt: "Hello Stored, speak calmly",
    });
    // The stored agent did not change.
    const stored = await suite.clients.agents.getVoiceAgent({ spaceId: suite.spaceId, voiceAgentId: agent });
    const config = stored.voiceAgent?.agentConfiguration?.configuration;
    expect(config?.case === "managed" && config.value.language).toBe("es");
  });

  it("a managed agent's reference variables must be strings (400); both variable maps are 400", async () => {
    const agent = await voiceAgent(AgentType.MANAGED_AGENT, {
      configuration: { case: "managed", value: {} },
    });
    await rejected(full({ voice_agent: { id: agent, dynamic_variables: { n: 3 } } }), 400, /string/);
    await rejected(full({ voice_agent: { id: agent, dynamic_variables: { b: true } } }), 400, /string/);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    await rejected(full({ voice_agent: { id: agent, dynamic_variables: many } }), 400, /50/);
    await rejected(
      full({ voice_agent: { id: agent, dynamic_variables: { a: "v".repeat(1001) } } }),
      400,
      /1000/,
    );
    await rejected(
      full({ voice_agent: { id: agent, dynamic_variables: { a: "1" } }, dynamic_variables: { a: "2" } }),
      400,
    );
    await minted(full({ voice_agent: { id: agent, dynamic_variables: { a: "v".repeat(1000) } } }));
  });
});

describe("LITE agent configurations", () => {
  const lite = (more: Record<string, unknown>) => ({ mode: "LITE", avatar_id: ADA.id, ...more });

  it.each([
    ["vendorA_agent_config", SecretType.VENDORA_API_KEY, { agent_id: "a" }],
    ["vendorD_agent_config", SecretType.VENDORD_API_KEY, { agent_id: "d" }],
    ["vendorB_realtime_config", SecretType.VENDORB_API_KEY, {}],
    ["vendorC_realtime_config", SecretType.VENDORC_API_KEY, {}],
  ] as const)("%s: the caller's secret of the matching type", async (key, type, rest) => {
    const body = (secretId: string) => lite({ [key]: { secret_id: secretId, ...rest } });
    expect(await rejected(body(unknownId()), 404)).toMatch(/Secret/);
    await rejected(body(await secret(type, other.spaceId)), 404);
    await rejected(body(await secret(SecretType.VENDORE_API_KEY)), 400, /VENDORE_API_KEY/);
    const session = await minted(body(await secret(type)));
    expect((await configOf(session.session_id))?.mode).toBe(SessionMode.LITE);
  });

  it("a realtime configuration's context must exist", async () => {
    const key = await secret(SecretType.VENDORB_API_KEY);
    await rejected(
      lite({ vendorB_realtime_config: { secret_id: key, context_id: unknownId() } }),
      404,
      /Context/,
    );
    const ctx = await context("Be brief", "Hi");
    const session = await minted(lite({ vendorB_realtime_config: { secret_id: key, context_id: ctx } }));
    expect(await configOf(session.session_id)).toMatchObject({
      contextId: ctx,
      prompt: "Be brief",
      openingText: "Hi",
    });
  });

  it("one agent configuration at most (400)", async () => {
    const a = await secret(SecretType.VENDORA_API_KEY);
    const d = await secret(SecretType.VENDORD_API_KEY);
    await rejected(
      lite({
        vendorA_agent_config: { secret_id: a, agent_id: "a" },
        vendorD_agent_config: { secret_id: d, agent_id: "d" },
      }),
      400,
    );
  });
});

describe("memory", () => {
  async function endedSessionWithMemory(topic: string): Promise<{ sessionId: string; memoryId: string }> {
    const session = await minted(full());
    const { sessions } = suite.clients;
    await sessions.startSession({ spaceId: suite.spaceId, sessionId: session.session_id });
    await sessions.appendTranscript({
      sessionId: session.session_id,
      entries: [
        { role: "user", transcript: `I like ${topic}.`, entryId: `${session.session_id}-0` },
        { role: "avatar", transcript: `Tell me about ${topic}.`, entryId: `${session.session_id}-1` },
      ],
    });
    await sessions.stopSession({ spaceId: suite.spaceId, sessionId: session.session_id });
    const created = await suite.clients.memory.createMemory({
      spaceId: suite.spaceId,
      memoryType: MemoryType.SESSION,
      sessionId: session.session_id,
    });
    return { sessionId: session.session_id, memoryId: created.memory?.id ?? "" };
  }

  it("404 for an unknown previous session or memory", async () => {
    await rejected(full({ memory: { prev_session_id: unknownId() } }), 404);
    await rejected(full({ memory: { session_memory_id: unknownId() } }), 404);
  });

  it("both ids must resolve to the same memory (400 otherwise)", async () => {
    const first = await endedSessionWithMemory("sailing");
    const second = await endedSessionWithMemory("chess");
    await rejected(
      full({ memory: { prev_session_id: first.sessionId, session_memory_id: second.memoryId } }),
      400,
      /different memories/,
    );
    const session = await minted(
      full({ memory: { prev_session_id: first.sessionId, session_memory_id: first.memoryId } }),
    );
    expect((await configOf(session.session_id))?.memoryId).toBe(first.memoryId);
  });
});

describe("max_session_duration", () => {
  it("422 over the space's limit, also for a space on another tier; default is the limit", async () => {
    const [entry] = await expect422(
      await suite.request("POST", TOKEN_PATH, {
        headers: { "X-API-KEY": other.apiKey },
        body: { avatar_id: PUBLIC_AVATAR.id, max_session_duration: 601 },
      }),
    );
    expect(entry).toEqual({
      type: "less_than_equal",
      loc: ["body", "max_session_duration"],
      msg: "Input should be less than or equal to 600",
      input: 601,
      ctx: { le: 600 },
    });
    const res = await suite.request("POST", TOKEN_PATH, {
      headers: { "X-API-KEY": other.apiKey },
      body: { avatar_id: PUBLIC_AVATAR.id },
    });
    const sessionId = (await json(res)).data.session_id;
    const { session } = await suite.clients.sessions.getSession({ spaceId: other.spaceId, sessionId });
    expect(session?.maxSessionDuration).toBe(600);
  });

  it("follows a space's own limit", async () => {
    await suite.clients.tokens.updateSpace({ spaceId: other.spaceId, maxSessionDuration: 120 });
    const res = await suite.request("POST", TOKEN_PATH, {
      headers: { "X-API-KEY": other.apiKey },
      body: { avatar_id: PUBLIC_AVATAR.id, max_session_duration: 121 },
    });
    expect((await expect422(res))[0]).toMatchObject({
      ctx: { le: 120 },
      msg: "Input should be less than or equal to 120",
    });
  });
});
