// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are part of the data
/**
 * A property test over real HTTP on the whole suite (not the route handler): thousands of generated
 * bodies, mixing valid and invalid values of every field of both shapes, nulls, unknown keys and bodies
 * that are not JSON objects, sent to POST /v1/sessions/token. For every answer: never a 5xx (nor any
 * status outside 200/400/404/422), every 422 in the exact `{"detail": [...]}` shape, every 400/404 in
 * the error envelope; and across the run, exactly one new session per 200 (none for a rejected request),
 * counted through SessionsService.ListSessions.
 */
import { SecretType } from "@avatar/contracts/agents";
import { AgentType } from "@avatar/contracts/common";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestSuite, type TestSuite } from "./support.js";
import {
  ADA,
  BEN,
  CHLOE,
  type Entry,
  expectEntryShape,
  KeyRing,
  PUBLIC_AVATAR,
  postToken,
  sessionCount,
  VOICES,
} from "./token-support.js";

const RUNS = Number(process.env.TOKEN_PROPERTY_RUNS ?? 2000);

let suite: TestSuite;
let keys: KeyRing;
const ids = { contexts: [] as string[], agents: [] as string[], secrets: [] as string[] };

beforeAll(async () => {
  suite = await startTestSuite();
  keys = new KeyRing(suite);
  const { agents } = suite.clients;
  const spaceId = suite.spaceId;
  for (const [prompt, opening] of [
    ["Plain prompt", "Hello"],
    ["Hi ${name}", "From ${city}"],
  ]) {
    ids.contexts.push(
      (await agents.createContext({ spaceId, name: "c", prompt, openingText: opening })).context?.id ?? "",
    );
  }
  for (const type of [
    SecretType.VENDORA_API_KEY,
    SecretType.VENDORB_API_KEY,
    SecretType.VENDORC_API_KEY,
    SecretType.VENDORD_API_KEY,
  ]) {
    const res = await agents.createSecret({
      spaceId,
      secretName: "k",
      secretValue: "sk-value-123456",
      secretType: type,
    });
    ids.secrets.push(res.secret?.id ?? "");
  }
  const managed = await agents.createVoiceAgent({
    spaceId,
    name: "managed",
    agentType: AgentType.MANAGED_AGENT,
    agentConfiguration: { configuration: { case: "managed", value: { contextId: ids.contexts[0] } } },
  });
  const vendorA = await agents.createVoiceAgent({
    spaceId,
    name: "vendorA",
    agentType: AgentType.VENDOR_A_AGENT,
    agentConfiguration: {
      configuration: { case: "vendorA", value: { secretId: ids.secrets[0] ?? "", agentId: "x" } },
    },
  });
  ids.agents.push(managed.voiceAgent?.id ?? "", vendorA.voiceAgent?.id ?? "");
}, 60_000);
afterAll(async () => {
  await suite?.stop();
});

// ---- Generators ----
// Each field is valid most of the time and otherwise out of range, of the wrong type, null or missing;
// optional keys appear now and then. Whole bodies then pass often enough to reach the tokens service's
// rules (400/404) and to mint (200), not only the schema (422).

/** A value is broken once in NOISE + 1 draws. */
const NOISE = 30;

const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
  fc.constant([]),
  fc.constant({}),
);
const mostly = <T>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: NOISE, arbitrary: valid }, { weight: 1, arbitrary: broken });
const some = <T>(arb: fc.Arbitrary<T>) => mostly(arb, junk);
/** Undefined keys are left out by JSON.stringify: an optional key is present about one time in four. */
const sometimes = (arb: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
/** A required key: present, unless (rarely) it is missing. */
const required = (arb: fc.Arbitrary<unknown>) => mostly(arb, fc.constant(undefined));
type Shape = Record<string, fc.Arbitrary<unknown>>;
/** An object with its required and optional keys; rarely something else entirely. */
const obj = (req: Shape, opt: Shape = {}) =>
  mostly(
    fc.record({
      ...Object.fromEntries(Object.entries(req).map(([k, v]) => [k, required(v)])),
      ...Object.fromEntries(Object.entries(opt).map(([k, v]) => [k, sometimes(v)])),
    }),
    junk,
  );

const uuidish = () =>
  mostly(
    fc.uuid(),
    fc.oneof(fc.constantFrom("not-a-uuid", "", "{00000000-0000-0000-0000-000000000000}"), junk),
  );
const between = (min: number, max: number) =>
  mostly(
    fc.oneof(fc.double({ min, max, noNaN: true }), fc.constantFrom(min, max)),
    fc.oneof(
      fc.constantFrom(min - 0.01, max + 0.01),
      fc.double({ min: max, max: max + 10, noNaN: true }),
      junk,
    ),
  );
const choice = (...values: string[]) => mostly(fc.constantFrom(...values), fc.string({ maxLength: 6 }));
/** A stored resource's id, or one that is not stored (404), or not an id at all. */
const anyOf = (pool: string[]) =>
  fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: uuidish() });
const variables = (value: fc.Arbitrary<unknown>) =>
  mostly(
    fc.dictionary(fc.constantFrom("name", "city", "x", "k".repeat(64)), value, { maxKeys: 4 }),
    fc.oneof(
      fc.constant({ ["k".repeat(65)]: "v" }),
      fc.constant(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))),
      junk,
    ),
  );
const stringValue = mostly(fc.string({ maxLength: 10 }), fc.constant("v".repeat(1001)));
const scalar = mostly(
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 10 }) },
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
  ),
  junk,
);

const voiceSettings = fc.oneof(
  obj(
    { provider: some(fc.constant("vendorA")) },
    {
      speed: between(0.8, 1.2),
      stability: between(0, 1),
      similarity_boost: between(0, 1),
      style: between(0, 1),
      use_speaker_boost: some(fc.boolean()),
      model: choice("vendorA_flash_v2_5", "vendorA_v3"),
      apply_language_text_normalization: some(fc.boolean()),
    },
  ),
  obj(
    { provider: some(fc.constant("vendorE")) },
    { speed: between(0.8, 1.2), model: choice("s1", "s2.1-pro"), latency_mode: choice("normal", "low") },
  ),
  obj(
    { provider: some(fc.constant("vendorD")) },
    { speed: between(0.6, 1.5), model: choice("sonic-3.6", "sonic-turbo") },
  ),
);

const common = {
  is_sandbox: some(fc.boolean()),
  video_settings: obj(
    {},
    { quality: choice("very_high", "high", "medium", "low"), encoding: choice("VP8", "H264") },
  ),
  max_session_duration: mostly(
    fc.oneof(fc.integer({ min: 1, max: 3600 }), fc.constantFrom(1, 3600, "60")),
    fc.oneof(fc.integer({ min: -2, max: 0 }), fc.constantFrom(3601, 1e12, 1.5), junk),
  ),
  unknown_extra: junk,
};
const avatarId = mostly(fc.constantFrom(ADA.id, BEN.id, CHLOE.id, PUBLIC_AVATAR.id), uuidish());

/**
 * What is sent: an object (as JSON) of either shape, or raw text that may not be JSON at all. Built once
 * the stored resources exist, so their ids are among the values.
 */
function bodies() {
  const fullBody = obj(
    { avatar_id: avatarId },
    {
      ...common,
      mode: mostly(fc.constant("FULL"), junk),
      avatar_persona: obj(
        {},
        {
          voice_id: mostly(fc.constantFrom(...VOICES.map((v) => v.id)), uuidish()),
          context_id: anyOf(ids.contexts),
          language: choice("en", "es", "ja", "xx"),
          voice_settings: voiceSettings,
          stt_config: obj({ provider: choice("sttvendor1", "vendorA") }),
          llm_settings: obj(
            {},
            { provider: some(fc.constant("vendorB")), model: choice("gpt-4o", "gpt-5.4-nano") },
          ),
        },
      ),
      voice_agent: obj(
        { id: anyOf(ids.agents) },
        { language: some(choice("en", "fr")), dynamic_variables: variables(scalar) },
      ),
      interactivity_type: choice("CONVERSATIONAL", "PUSH_TO_TALK"),
      llm_configuration_id: uuidish(),
      dynamic_variables: variables(stringValue),
      memory: obj({}, { prev_session_id: uuidish(), session_memory_id: uuidish() }),
    },
  );

  const secretRef = anyOf(ids.secrets);
  const liteBody = obj(
    { avatar_id: avatarId, mode: mostly(fc.constantFrom("LITE", "CUSTOM"), junk) },
    {
      ...common,
      transportA_config: obj({
        transportA_url: some(fc.string()),
        transportA_room: some(fc.string()),
        transportA_client_token: some(fc.string()),
      }),
      transportB_config: obj({
        transportB_app_id: some(fc.string()),
        transportB_token: some(fc.string()),
        transportB_channel: some(fc.string()),
        transportB_uid: some(fc.string()),
      }),
      vendorA_agent_config: obj(
        { secret_id: secretRef, agent_id: some(fc.string()) },
        { voice_id: some(fc.string()), dynamic_variables: variables(scalar) },
      ),
      vendorD_agent_config: obj({ secret_id: secretRef, agent_id: some(fc.string()) }),
      vendorB_realtime_config: obj(
        { secret_id: secretRef },
        {
          model: choice("gpt-realtime", "gpt-live-1"),
          voice: choice("alloy", "marin", "aster"),
          temperature: between(0.6, 1.2),
          context_id: anyOf(ids.contexts),
        },
      ),
      vendorC_realtime_config: obj(
        { secret_id: secretRef },
        {
          context_id: anyOf(ids.contexts),
          voice: choice("Puck", "Kore"),
          temperature: between(0, 2),
          model: choice("vendorC-3.1-flash-live-preview"),
        },
      ),
    },
  );

  return fc.oneof(
    { weight: 8, arbitrary: fullBody },
    { weight: 8, arbitrary: liteBody },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((text) => ({ raw: text })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ raw: JSON.stringify(value) })) },
  );
}

const isRaw = (b: unknown): b is { raw: string } =>
  typeof b === "object" &&
  b !== null &&
  Object.keys(b).length === 1 &&
  typeof (b as { raw?: unknown }).raw === "string";

describe("generated bodies", () => {
  it(`${RUNS} bodies: no 5xx, exact 422s, a session only for a 200`, async () => {
    const before = await sessionCount(suite);
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(bodies(), async (b) => {
        const res = await postToken(suite, keys, isRaw(b) ? b.raw : b);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        expect([200, 400, 404, 422]).toContain(res.status);
        const payload = await json(res);
        if (res.status === 422) {
          expect(Object.keys(payload)).toEqual(["detail"]);
          expect(payload.detail.length).toBeGreaterThan(0);
          for (const entry of payload.detail as Entry[]) expectEntryShape(entry);
        } else if (res.status === 200) {
          expect(payload).toMatchObject({
            code: 100,
            data: { session_id: expect.any(String), session_token: expect.any(String) },
          });
        } else {
          expect(payload).toMatchObject({ code: res.status * 10, data: null, message: expect.any(String) });
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(await sessionCount(suite)).toBe(before + (statuses[200] ?? 0));
    // The generators must reach every kind of answer, or the property says little.
    expect(Object.keys(statuses).sort()).toEqual(["200", "400", "404", "422"]);
  }, 600_000);
});
