/**
 * POST /v1/sessions/token, the body over real HTTP on the whole suite: every range and enum edge (just
 * inside and just outside), wrong types, nulls, unknown keys, oversized dynamic variables, bodies that are
 * not JSON, and the choice between the FULL and LITE shapes. 422 entries are compared whole.
 */
import { SecretType } from "@avatar/contracts/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestSuite, type TestSuite } from "./support.js";
import {
  ADA,
  BEN,
  claimsOf,
  type Entry,
  expect422,
  KeyRing,
  postToken,
  sessionCount,
} from "./token-support.js";

let suite: TestSuite;
let keys: KeyRing;
const secrets: Partial<Record<SecretType, string>> = {};

beforeAll(async () => {
  suite = await startTestSuite();
  keys = new KeyRing(suite);
  for (const type of [
    SecretType.VENDORA_API_KEY,
    SecretType.VENDORB_API_KEY,
    SecretType.VENDORC_API_KEY,
    SecretType.VENDORD_API_KEY,
  ]) {
    const res = await suite.clients.agents.createSecret({
      spaceId: suite.spaceId,
      secretName: `key ${type}`,
      secretValue: "sk-test-value",
      secretType: type,
    });
    secrets[type] = res.secret?.id ?? "";
  }
});
afterAll(async () => {
  await suite?.stop();
});

const post = (body: unknown) => postToken(suite, keys, body);
const full = (more: Record<string, unknown> = {}) => ({ avatar_id: ADA.id, ...more });
const lite = (more: Record<string, unknown> = {}) => ({ mode: "LITE", avatar_id: ADA.id, ...more });
const secret = (type: SecretType) => secrets[type] ?? "";

async function ok(body: unknown) {
  const res = await post(body);
  const payload = await json(res);
  expect({ status: res.status, payload }).toMatchObject({ status: 200, payload: { code: 100 } });
  return payload.data as { session_id: string; session_token: string };
}

async function only(body: unknown): Promise<Entry> {
  const entries = await expect422(await post(body));
  expect(entries).toHaveLength(1);
  return entries[0] as Entry;
}

const persona = (voice_settings: unknown) => full({ avatar_persona: { voice_settings } });

describe("ranges, just inside and just outside", () => {
  const ranges: [string, (v: number) => unknown, string[], number, number, number, number][] = [
    [
      "vendorA speed",
      (v) => persona({ provider: "vendorA", speed: v }),
      ["avatar_persona", "voice_settings", "vendorA", "speed"],
      0.8,
      1.2,
      0.79,
      1.21,
    ],
    [
      "vendorA stability",
      (v) => persona({ provider: "vendorA", stability: v }),
      ["avatar_persona", "voice_settings", "vendorA", "stability"],
      0,
      1,
      -0.01,
      1.01,
    ],
    [
      "vendorA similarity_boost",
      (v) => persona({ provider: "vendorA", similarity_boost: v }),
      ["avatar_persona", "voice_settings", "vendorA", "similarity_boost"],
      0,
      1,
      -0.01,
      1.01,
    ],
    [
      "vendorA style",
      (v) => persona({ provider: "vendorA", style: v }),
      ["avatar_persona", "voice_settings", "vendorA", "style"],
      0,
      1,
      -0.01,
      1.01,
    ],
    [
      "vendorE speed",
      (v) => persona({ provider: "vendorE", speed: v }),
      ["avatar_persona", "voice_settings", "vendorE", "speed"],
      0.8,
      1.2,
      0.79,
      1.21,
    ],
    [
      "vendorD speed",
      (v) => persona({ provider: "vendorD", speed: v }),
      ["avatar_persona", "voice_settings", "vendorD", "speed"],
      0.6,
      1.5,
      0.59,
      1.51,
    ],
    [
      "vendorB temperature",
      (v) =>
        lite({ vendorB_realtime_config: { secret_id: secret(SecretType.VENDORB_API_KEY), temperature: v } }),
      ["vendorB_realtime_config", "temperature"],
      0.6,
      1.2,
      0.59,
      1.21,
    ],
    [
      "vendorC temperature",
      (v) =>
        lite({ vendorC_realtime_config: { secret_id: secret(SecretType.VENDORC_API_KEY), temperature: v } }),
      ["vendorC_realtime_config", "temperature"],
      0,
      2,
      -0.01,
      2.01,
    ],
  ];

  it.each(ranges)("%s", async (_name, body, loc, low, high, below, above) => {
    await ok(body(low));
    await ok(body(high));
    expect(await only(body(below))).toEqual({
      type: "greater_than_equal",
      loc: ["body", ...loc],
      msg: `Input should be greater than or equal to ${low}`,
      input: below,
      ctx: { ge: low },
    });
    expect(await only(body(above))).toEqual({
      type: "less_than_equal",
      loc: ["body", ...loc],
      msg: `Input should be less than or equal to ${high}`,
      input: above,
      ctx: { le: high },
    });
  });

  it("max_session_duration: 1 and the tier limit pass, 0 and limit + 1 do not", async () => {
    await ok(full({ max_session_duration: 1 }));
    await ok(full({ max_session_duration: 3600 })); // the demo space is on the pro tier
    expect(await only(full({ max_session_duration: 0 }))).toEqual({
      type: "greater_than_equal",
      loc: ["body", "max_session_duration"],
      msg: "Input should be greater than or equal to 1",
      input: 0,
      ctx: { ge: 1 },
    });
    expect(await only(full({ max_session_duration: 3601 }))).toEqual({
      type: "less_than_equal",
      loc: ["body", "max_session_duration"],
      msg: "Input should be less than or equal to 3600",
      input: 3601,
      ctx: { le: 3600 },
    });
  });

  it("max_session_duration far beyond any limit keeps its input; its type is checked", async () => {
    expect(await only(full({ max_session_duration: 1e12 }))).toMatchObject({
      type: "less_than_equal",
      input: 1e12,
      ctx: { le: 3600 },
    });
    expect(await only(full({ max_session_duration: 1.5 }))).toEqual({
      type: "int_from_float",
      loc: ["body", "max_session_duration"],
      msg: "Input should be a valid integer, got a number with a fractional part",
      input: 1.5,
    });
    expect(await only(full({ max_session_duration: null }))).toMatchObject({ type: "int_type", input: null });
    await ok(full({ max_session_duration: "60" }));
  });

  it("the sandbox cap applies after the limit check", async () => {
    const minted = await ok(full({ is_sandbox: true, max_session_duration: 3600 }));
    const { session } = await suite.clients.sessions.getSession({
      spaceId: suite.spaceId,
      sessionId: minted.session_id,
    });
    expect(session?.maxSessionDuration).toBe(60);
  });
});

describe("dynamic_variables limits", () => {
  const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

  it("50 entries pass, 51 do not", async () => {
    await ok(full({ dynamic_variables: entries(50) }));
    const input = entries(51);
    expect(await only(full({ dynamic_variables: input }))).toEqual({
      type: "too_long",
      loc: ["body", "dynamic_variables"],
      msg: "Dictionary should have at most 50 items after validation, not 51",
      input,
      ctx: { field_type: "Dictionary", max_length: 50, actual_length: 51 },
    });
  });

  it("keys of 64 characters pass, 65 do not", async () => {
    await ok(full({ dynamic_variables: { ["k".repeat(64)]: "v" } }));
    const key = "k".repeat(65);
    expect(await only(full({ dynamic_variables: { [key]: "v" } }))).toEqual({
      type: "string_too_long",
      loc: ["body", "dynamic_variables", key, "[key]"],
      msg: "String should have at most 64 characters",
      input: key,
      ctx: { max_length: 64 },
    });
  });

  it("values of 1000 characters pass, 1001 do not; values are strings", async () => {
    await ok(full({ dynamic_variables: { a: "v".repeat(1000) } }));
    const value = "v".repeat(1001);
    expect(await only(full({ dynamic_variables: { a: value } }))).toEqual({
      type: "string_too_long",
      loc: ["body", "dynamic_variables", "a"],
      msg: "String should have at most 1000 characters",
      input: value,
      ctx: { max_length: 1000 },
    });
    expect(await only(full({ dynamic_variables: { a: 1 } }))).toEqual({
      type: "string_type",
      loc: ["body", "dynamic_variables", "a"],
      msg: "Input should be a valid string",
      input: 1,
    });
    expect(await only(full({ dynamic_variables: null }))).toMatchObject({ type: "dict_type", input: null });
  });

  it("a voice agent reference takes strings, integers, numbers and booleans only", async () => {
    const entries422 = await expect422(
      await post(full({ voice_agent: { id: ADA.id, dynamic_variables: { a: [1] } } })),
    );
    expect(entries422.map((e) => [e.loc.slice(1).join("."), e.type])).toEqual([
      ["voice_agent.dynamic_variables.a.str", "string_type"],
      ["voice_agent.dynamic_variables.a.int", "int_type"],
      ["voice_agent.dynamic_variables.a.float", "float_type"],
      ["voice_agent.dynamic_variables.a.bool", "bool_type"],
    ]);
  });
});

describe("enums and literals", () => {
  const enums: [string, (v: string) => unknown, string[], string[], string, string][] = [
    [
      "video quality",
      (v) => full({ avatar_id: BEN.id, video_settings: { quality: v } }),
      ["video_settings", "quality"],
      ["very_high", "high", "medium", "low"],
      "ultra",
      "enum",
    ],
    [
      "video encoding",
      (v) => full({ video_settings: { encoding: v } }),
      ["video_settings", "encoding"],
      ["VP8", "H264"],
      "vp8",
      "enum",
    ],
    [
      "interactivity_type",
      (v) => full({ interactivity_type: v }),
      ["interactivity_type"],
      ["CONVERSATIONAL", "PUSH_TO_TALK"],
      "push",
      "enum",
    ],
    [
      "vendorA model",
      (v) => persona({ provider: "vendorA", model: v }),
      ["avatar_persona", "voice_settings", "vendorA", "model"],
      [
        "vendorA_flash_v2_5",
        "vendorA_multilingual_v2",
        "vendorA_v3",
        "vendorA_v3_conversational",
        "vendorA_v4_turbo",
      ],
      "vendorA_v5",
      "enum",
    ],
    [
      "vendorE model",
      (v) => persona({ provider: "vendorE", model: v }),
      ["avatar_persona", "voice_settings", "vendorE", "model"],
      ["s1", "s2", "s2-pro", "s2.1-pro"],
      "s3",
      "enum",
    ],
    [
      "vendorE latency_mode",
      (v) => persona({ provider: "vendorE", latency_mode: v }),
      ["avatar_persona", "voice_settings", "vendorE", "latency_mode"],
      ["normal", "balanced", "low"],
      "fast",
      "enum",
    ],
    [
      "vendorD model",
      (v) => persona({ provider: "vendorD", model: v }),
      ["avatar_persona", "voice_settings", "vendorD", "model"],
      ["sonic-3.6", "sonic-3.5", "sonic-3", "sonic-2", "sonic-turbo"],
      "sonic-4",
      "enum",
    ],
    [
      "stt provider",
      (v) => full({ avatar_persona: { stt_config: { provider: v } } }),
      ["avatar_persona", "stt_config", "provider"],
      ["sttvendor1", "sttvendor2", "sttvendor3", "vendorA"],
      "sttvendor4",
      "enum",
    ],
    [
      "llm model",
      (v) => full({ avatar_persona: { llm_settings: { model: v } } }),
      ["avatar_persona", "llm_settings", "model"],
      ["gpt-4o", "gpt-4o-mini", "gpt-5-nano", "gpt-5.4-nano"],
      "gpt-9",
      "enum",
    ],
    [
      "llm provider",
      (v) => full({ avatar_persona: { llm_settings: { provider: v } } }),
      ["avatar_persona", "llm_settings", "provider"],
      ["vendorB"],
      "vendorC",
      "literal_error",
    ],
    [
      "vendorB model",
      (v) =>
        lite({
          vendorB_realtime_config: {
            secret_id: secret(SecretType.VENDORB_API_KEY),
            model: v,
            voice: "marin",
          },
        }),
      ["vendorB_realtime_config", "model"],
      ["gpt-realtime", "gpt-realtime-mini", "gpt-realtime-2.1", "gpt-realtime-2.1-mini", "gpt-live-1"],
      "gpt-5",
      "enum",
    ],
    [
      "vendorC voice",
      (v) => lite({ vendorC_realtime_config: { secret_id: secret(SecretType.VENDORC_API_KEY), voice: v } }),
      ["vendorC_realtime_config", "voice"],
      ["Achernar", "Puck", "Zubenelgenubi"],
      "puck",
      "enum",
    ],
    [
      "vendorC model",
      (v) => lite({ vendorC_realtime_config: { secret_id: secret(SecretType.VENDORC_API_KEY), model: v } }),
      ["vendorC_realtime_config", "model"],
      ["vendorC-2.5-flash-native-audio-preview-12-2025", "vendorC-3.1-flash-live-preview"],
      "vendorC-1",
      "enum",
    ],
  ];

  it.each(enums)("%s", async (_name, body, loc, values, wrong, type) => {
    for (const value of values) await ok(body(value));
    const entry = await only(body(wrong));
    expect(entry).toMatchObject({ type, loc: ["body", ...loc], input: wrong });
    expect(entry.msg).toBe(`Input should be ${entry.ctx?.expected}`);
  });

  it("the voice settings discriminator", async () => {
    expect(await only(persona({ speed: 1 }))).toMatchObject({
      type: "union_tag_not_found",
      loc: ["body", "avatar_persona", "voice_settings"],
    });
    expect(await only(persona({ provider: "vendorX" }))).toEqual({
      type: "union_tag_invalid",
      loc: ["body", "avatar_persona", "voice_settings"],
      msg: "Input tag 'vendorX' found using 'provider' does not match any of the expected tags: 'vendorA', 'vendorE', 'vendorD'",
      input: { provider: "vendorX" },
      ctx: { discriminator: "'provider'", tag: "vendorX", expected_tags: "'vendorA', 'vendorE', 'vendorD'" },
    });
  });

  it("vendorB voices belong to the model's family; temperature to the realtime family", async () => {
    const vb = (more: Record<string, unknown>) =>
      lite({ vendorB_realtime_config: { secret_id: secret(SecretType.VENDORB_API_KEY), ...more } });
    await ok(vb({ model: "gpt-realtime", voice: "cedar" }));
    await ok(vb({ model: "gpt-live-1", voice: "aster" }));
    await ok(vb({ model: "gpt-live-1" }));
    const realtime = await only(vb({ model: "gpt-realtime", voice: "aster" }));
    expect(realtime).toMatchObject({ type: "value_error", loc: ["body", "vendorB_realtime_config"] });
    expect(realtime.msg).toMatch(/^Value error, voice 'aster' is not a voice of gpt-realtime/);
    const duplex = await only(vb({ model: "gpt-live-1", voice: "alloy" }));
    expect(duplex.msg).toMatch(/^Value error, voice 'alloy' is not a voice of gpt-live-1/);
    expect(await only(vb({ model: "gpt-live-1", temperature: 0.8 }))).toMatchObject({
      type: "value_error",
      msg: "Value error, temperature applies to the realtime models only, not to gpt-live-1",
    });
    expect(await only(vb({ voice: "nobody" }))).toMatchObject({
      type: "enum",
      loc: ["body", "vendorB_realtime_config", "voice"],
    });
  });

  it("defaults the vendorB voice by family", async () => {
    const vb = (model: string) =>
      lite({
        is_sandbox: true,
        vendorB_realtime_config: { secret_id: secret(SecretType.VENDORB_API_KEY), model },
      });
    const realtime = claimsOf((await ok(vb("gpt-realtime"))).session_token);
    expect(realtime.start_session_data.resolved.lite.vendor_b_realtime).toMatchObject({
      voice: "alloy",
      temperature: 0.8,
    });
    const duplex = claimsOf((await ok(vb("gpt-live-1"))).session_token);
    expect(duplex.start_session_data.resolved.lite.vendor_b_realtime).toMatchObject({ voice: "marin" });
  });
});

describe("wrong types, missing fields, nulls and unknown keys", () => {
  it("avatar_id is required and a UUID", async () => {
    const input = { is_sandbox: false };
    expect(await only(input)).toEqual({
      type: "missing",
      loc: ["body", "avatar_id"],
      msg: "Field required",
      input,
    });
    expect(await only(full({ avatar_id: "nope" }))).toMatchObject({
      type: "uuid_parsing",
      loc: ["body", "avatar_id"],
    });
    expect(await only(full({ avatar_id: 5 }))).toMatchObject({
      type: "uuid_type",
      loc: ["body", "avatar_id"],
    });
  });

  it("booleans and objects of the wrong type", async () => {
    expect(await only(full({ is_sandbox: "maybe" }))).toMatchObject({
      type: "bool_parsing",
      loc: ["body", "is_sandbox"],
    });
    expect(await only(full({ is_sandbox: null }))).toMatchObject({
      type: "bool_type",
      loc: ["body", "is_sandbox"],
    });
    expect(await only(full({ video_settings: "high" }))).toMatchObject({
      type: "model_attributes_type",
      loc: ["body", "video_settings"],
    });
    expect(
      await only(
        full({ avatar_persona: { voice_settings: { provider: "vendorA", use_speaker_boost: "x" } } }),
      ),
    ).toMatchObject({
      type: "bool_parsing",
      loc: ["body", "avatar_persona", "voice_settings", "vendorA", "use_speaker_boost"],
    });
    expect(await only(full({ llm_configuration_id: "x" }))).toMatchObject({
      type: "uuid_parsing",
      loc: ["body", "llm_configuration_id"],
    });
    expect(await only(full({ memory: { prev_session_id: 1 } }))).toMatchObject({
      type: "uuid_type",
      loc: ["body", "memory", "prev_session_id"],
    });
  });

  it("required fields of nested objects", async () => {
    expect(await only(full({ avatar_persona: { stt_config: {} } }))).toEqual({
      type: "missing",
      loc: ["body", "avatar_persona", "stt_config", "provider"],
      msg: "Field required",
      input: {},
    });
    expect(await only(full({ voice_agent: { language: "en" } }))).toMatchObject({
      type: "missing",
      loc: ["body", "voice_agent", "id"],
    });
    const transportB = await expect422(await post(lite({ transportB_config: {} })));
    expect(transportB.map((e) => e.loc.join("."))).toEqual([
      "body.transportB_config.transportB_app_id",
      "body.transportB_config.transportB_token",
      "body.transportB_config.transportB_channel",
      "body.transportB_config.transportB_uid",
    ]);
    const transportA = await only(
      lite({ transportA_config: { transportA_url: "wss://x", transportA_room: "r" } }),
    );
    expect(transportA).toMatchObject({
      type: "missing",
      loc: ["body", "transportA_config", "transportA_client_token"],
    });
    expect(await only(lite({ vendorA_agent_config: { agent_id: "a" } }))).toMatchObject({
      type: "missing",
      loc: ["body", "vendorA_agent_config", "secret_id"],
    });
    expect(
      await only(lite({ vendorD_agent_config: { secret_id: secret(SecretType.VENDORD_API_KEY) } })),
    ).toMatchObject({
      type: "missing",
      loc: ["body", "vendorD_agent_config", "agent_id"],
    });
  });

  it("reports every issue of a body at once, in field order", async () => {
    const entries = await expect422(
      await post({ avatar_id: "x", is_sandbox: "x", video_settings: { quality: "x" } }),
    );
    expect(entries.map((e) => e.loc.join("."))).toEqual([
      "body.avatar_id",
      "body.is_sandbox",
      "body.video_settings.quality",
    ]);
  });

  it("null is accepted wherever an object is allowed", async () => {
    await ok(
      full({
        video_settings: null,
        avatar_persona: null,
        voice_agent: null,
        memory: null,
      }),
    );
    await ok(full({ avatar_persona: { voice_settings: null, stt_config: null, llm_settings: null } }));
    await ok(
      lite({
        transportA_config: null,
        transportB_config: null,
        vendorA_agent_config: null,
        vendorD_agent_config: null,
        vendorB_realtime_config: null,
        vendorC_realtime_config: null,
      }),
    );
  });

  it("unknown keys are ignored, at the top and inside objects", async () => {
    await ok(
      full({
        surprise: 1,
        video_settings: { quality: "low", extra: [1] },
        avatar_persona: { unknown: true },
      }),
    );
    await ok(
      lite({
        transportA_config: {
          transportA_url: "wss://u",
          transportA_room: "r",
          transportA_client_token: "t",
          x: 1,
        },
      }),
    );
  });
});

describe("bodies that are not JSON objects", () => {
  const raw = (body: string) => postToken(suite, keys, body);

  it.each([
    ["{", 1, "Expecting property name enclosed in double quotes"],
    ["not json", 0, "Expecting value"],
    ['{"avatar_id": }', 14, "Expecting value"],
  ])("%j is json_invalid", async (body, position, error) => {
    expect(await expect422(await raw(body))).toEqual([
      { type: "json_invalid", loc: ["body", position], msg: "JSON decode error", input: {}, ctx: { error } },
    ]);
  });

  it("an empty body or JSON null is a missing body", async () => {
    for (const body of ["", "null"]) {
      expect(await expect422(await raw(body))).toEqual([
        { type: "missing", loc: ["body"], msg: "Field required", input: null },
      ]);
    }
  });

  it.each([["[]"], ['"text"'], ["5"]])("%s is not an object", async (body) => {
    expect(await expect422(await raw(body))).toEqual([
      {
        type: "model_attributes_type",
        loc: ["body"],
        msg: "Input should be a valid dictionary or object to extract fields from",
        input: JSON.parse(body),
      },
    ]);
  });
});

describe("the shape: FULL or LITE", () => {
  const modeOf = async (body: unknown) => claimsOf((await ok(body)).session_token).start_session_data.mode;
  const transportA = { transportA_url: "wss://t", transportA_room: "room", transportA_client_token: "tok" };

  it("by mode", async () => {
    expect(await modeOf(full({ mode: "FULL" }))).toBe("FULL");
    expect(await modeOf(full({ mode: "LITE" }))).toBe("LITE");
    expect(await modeOf(full({ mode: "CUSTOM" }))).toBe("LITE");
  });

  it("by the objects present when mode is absent", async () => {
    expect(await modeOf(full())).toBe("FULL");
    expect(await modeOf(full({ transportA_config: transportA }))).toBe("LITE");
    expect(await modeOf(full({ transportA_config: null }))).toBe("FULL");
    expect(
      await modeOf(
        full({
          avatar_persona: {},
          vendorC_realtime_config: { secret_id: secret(SecretType.VENDORC_API_KEY) },
        }),
      ),
    ).toBe("LITE");
  });

  it("mode wins over the objects: the other shape's objects are ignored", async () => {
    expect(await modeOf(full({ mode: "FULL", transportA_config: transportA }))).toBe("FULL");
    expect(
      await modeOf(full({ mode: "LITE", avatar_persona: { voice_settings: { provider: "nope" } } })),
    ).toBe("LITE");
  });

  it("CUSTOM is stored as LITE", async () => {
    const minted = await ok(full({ mode: "CUSTOM" }));
    const { session } = await suite.clients.sessions.getSession({
      spaceId: suite.spaceId,
      sessionId: minted.session_id,
    });
    expect(session?.mode).toBe(2); // SESSION_MODE_LITE
  });

  it.each([["full"], ["lite"], [null], [1], [""]])(
    "a wrong mode %j is a literal_error at [body, mode]",
    async (mode) => {
      const before = await sessionCount(suite);
      expect(await only(full({ mode }))).toEqual({
        type: "literal_error",
        loc: ["body", "mode"],
        msg: "Input should be 'FULL', 'LITE' or 'CUSTOM'",
        input: mode,
        ctx: { expected: "'FULL', 'LITE' or 'CUSTOM'" },
      });
      expect(await sessionCount(suite)).toBe(before);
    },
  );

  it("a wrong mode with LITE objects is judged as LITE, other issues included", async () => {
    const entries = await expect422(
      await post(full({ mode: "lite", transportA_config: { transportA_room: "r" } })),
    );
    expect(entries.map((e) => `${e.loc.join(".")}:${e.type}`)).toEqual([
      "body.mode:literal_error",
      "body.transportA_config.transportA_url:missing",
      "body.transportA_config.transportA_client_token:missing",
    ]);
  });
});
