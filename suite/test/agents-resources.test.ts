// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what contexts are about
import { readCatalogFile } from "@avatar/catalog";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/** Contexts, voice agents, LLM configurations and embeds over HTTP, on the whole suite. */

let suite: TestSuite;
const catalog = readCatalogFile();
const demoAvatar = catalog.demo_space_avatars[0];
const sandboxAvatar = catalog.demo_space_avatars.find((a) => a.sandbox_enabled);
const plainAvatar = catalog.demo_space_avatars.find((a) => !a.sandbox_enabled);
const publicVoice = catalog.voices[0];
const MISSING = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  suite = await startTestSuite();
});
afterAll(async () => {
  await suite?.stop();
});

/** One request with the demo key; a burst over the per-second limit waits for the next window. */
async function call(method: string, path: string, body?: unknown) {
  for (;;) {
    const res = await suite.request(method, path, {
      headers: { "X-API-KEY": suite.apiKey },
      ...(body !== undefined ? { body } : {}),
    });
    if (res.status === 429) {
      await atNextSecond();
      continue;
    }
    return { status: res.status, body: await json(res) };
  }
}

async function created(method: string, path: string, body?: unknown) {
  const res = await call(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.code).toBe(100);
  return res.body.data;
}

async function secretId(secret_type = "VENDORB_API_KEY"): Promise<string> {
  return (
    await created("POST", "/v1/secrets", {
      secret_name: "k",
      secret_value: "sk-resources",
      secret_type,
      allowed_hosts: ["127.0.0.1"],
    })
  ).id;
}

const detailTypes = (body: { detail: { type: string; loc: unknown[] }[] }) =>
  body.detail.map((d) => [d.type, d.loc.join(".")]);

describe("contexts", () => {
  it("create, get, list, update, copy and delete", async () => {
    const context = await created("POST", "/v1/contexts", {
      name: "Support",
      prompt: "You help ${customer} with ${product}.",
      opening_text: "Hi ${customer}",
      links: [{ url: "https://example.com/faq", faq: "Q&A" }],
      unknown_key: "ignored",
    });
    expect(context).toMatchObject({
      name: "Support",
      opening_text: "Hi ${customer}",
      links: [{ url: "https://example.com/faq", faq: "Q&A" }],
      is_public: false,
      required_dynamic_variables: ["customer", "product"],
    });
    expect(context.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    expect((await created("GET", `/v1/contexts/${context.id}`)).required_dynamic_variables).toEqual([
      "customer",
      "product",
    ]);
    const list = await created("GET", "/v1/contexts?page_size=1");
    expect(list).toMatchObject({ count: 1, previous: null, next: null });
    expect(list.results[0]).not.toHaveProperty("required_dynamic_variables");

    const updated = await created("PATCH", `/v1/contexts/${context.id}`, {
      opening_text: "Hello ${who}",
      links: null,
    });
    expect(updated).toMatchObject({
      name: "Support",
      required_dynamic_variables: ["customer", "product", "who"],
    });
    expect(updated.links).toHaveLength(1);

    const copy = await created("POST", `/v1/contexts/${context.id}/copy`);
    expect(copy).toMatchObject({ name: "Support (Copy)", is_public: false, prompt: context.prompt });
    const named = await created("POST", `/v1/contexts/${context.id}/copy`, { name: "Mine" });
    expect(named.name).toBe("Mine");

    expect(await created("DELETE", `/v1/contexts/${context.id}`)).toBeNull();
    const again = await call("DELETE", `/v1/contexts/${context.id}`);
    expect(again).toMatchObject({ status: 404, body: { code: 4040, data: null } });
  });

  it("copies a public context of another space into the caller's space", async () => {
    const other = await suite.clients.tokens.createSpace({ name: "Library" });
    const { context: pub } = await suite.clients.agents.createContext({
      spaceId: other.space?.id ?? "",
      name: "Shared",
      prompt: "Public ${x}",
      isPublic: true,
    });
    const copy = await created("POST", `/v1/contexts/${pub?.id}/copy`, {});
    expect(copy).toMatchObject({
      name: "Shared (Copy)",
      is_public: false,
      required_dynamic_variables: ["x"],
    });
    expect((await created("GET", `/v1/contexts/${copy.id}`)).id).toBe(copy.id);
    expect((await created("GET", `/v1/contexts/${pub?.id}`)).is_public).toBe(true);
  });

  it("422 for names over the limit, a missing prompt, bad links and ids that are not UUIDs", async () => {
    const res = await call("POST", "/v1/contexts", {
      name: "x".repeat(256),
      links: [{ url: "not a url" }],
    });
    expect(res.status).toBe(422);
    expect(detailTypes(res.body)).toEqual([
      ["string_too_long", "body.name"],
      ["missing", "body.prompt"],
      ["url_parsing", "body.links.0.url"],
    ]);
    expect(res.body.detail[0]).toMatchObject({
      ctx: { max_length: 255 },
      msg: "String should have at most 255 characters",
    });
    for (const [method, path] of [
      ["GET", "/v1/contexts/123"],
      ["PATCH", "/v1/contexts/123"],
      ["DELETE", "/v1/contexts/123"],
      ["POST", "/v1/contexts/123/copy"],
    ] as const) {
      const r = await call(method, path, method === "PATCH" ? {} : undefined);
      expect(r.status, `${method} ${path}`).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "context_id"] });
    }
  });
});

describe("voice agents", () => {
  it("creates each agent type, reads it back with its configuration, lists and deletes", async () => {
    const contextId = (await created("POST", "/v1/contexts", { name: "c", prompt: "p" })).id;
    const managed = await created("POST", "/v1/voice_agents", {
      name: "Concierge",
      agent_type: "managed_agent",
      agent_configuration: {
        voice_id: publicVoice?.id,
        context_id: contextId,
        language: "en",
        voice_settings: { provider: "vendorE", speed: 1.1 },
        stt_config: { provider: "sttvendor2" },
        dynamic_variables: { company: "Acme" },
      },
    });
    expect(managed).toMatchObject({
      agent_type: "managed_agent",
      is_public: false,
      agent_configuration: {
        voice_id: publicVoice?.id,
        context_id: contextId,
        voice_settings: { provider: "vendorE", speed: 1.1, model: "s2.1-pro", latency_mode: "balanced" },
        stt_config: { provider: "sttvendor2" },
        llm_settings: { provider: "vendorB", model: "gpt-5.4-nano" },
        llm_configuration_id: null,
        dynamic_variables: { company: "Acme" },
      },
    });

    const vendorA = await created("POST", "/v1/voice_agents", {
      name: "Hosted",
      agent_type: "vendorA_agent",
      agent_configuration: { secret_id: await secretId("VENDORA_API_KEY"), agent_id: "agent_123" },
      is_public: true,
    });
    expect(vendorA).toMatchObject({
      is_public: true,
      agent_configuration: { agent_id: "agent_123", voice_id: null },
    });
    const vendorD = await created("POST", "/v1/voice_agents", {
      name: "D",
      agent_type: "vendorD_agent",
      agent_configuration: { secret_id: await secretId("VENDORD_API_KEY"), agent_id: "d-1" },
    });
    expect(Object.keys(vendorD.agent_configuration).sort()).toEqual(["agent_id", "secret_id"]);
    const vendorB = await created("POST", "/v1/voice_agents", {
      name: "Realtime",
      agent_type: "vendorB_agent",
      agent_configuration: { model: "gpt-live-1", secret_id: await secretId(), context_id: contextId },
    });
    expect(vendorB.agent_configuration).toMatchObject({
      model: "gpt-live-1",
      voice: "marin",
      temperature: null,
    });

    const got = await created("GET", `/v1/voice_agents/${managed.id}`);
    expect(got.agent_configuration.llm_settings).toEqual({ provider: "vendorB", model: "gpt-5.4-nano" });
    const mine = await created("GET", "/v1/voice_agents");
    expect(Array.isArray(mine)).toBe(true);
    expect(mine.map((a: { name: string }) => a.name)).toEqual(["Realtime", "D", "Hosted", "Concierge"]);
    expect(mine[0]).not.toHaveProperty("agent_configuration");
    const pub = await created("GET", "/v1/voice_agents?scope=public");
    expect(pub.map((a: { id: string }) => a.id)).toContain(vendorA.id);
    expect(pub.every((a: { is_public: boolean }) => a.is_public)).toBe(true);

    const renamed = await created("PATCH", `/v1/voice_agents/${managed.id}`, {
      name: "Renamed",
      agent_configuration: { llm_settings: { model: "gpt-4o" } },
    });
    expect(renamed).toMatchObject({
      name: "Renamed",
      agent_configuration: { llm_settings: { provider: "vendorB", model: "gpt-4o" }, voice_id: null },
    });

    expect(await created("DELETE", `/v1/voice_agents/${vendorD.id}`)).toBeNull();
    expect((await call("DELETE", `/v1/voice_agents/${vendorD.id}`)).status).toBe(404);
    expect((await call("GET", `/v1/voice_agents/${vendorD.id}`)).status).toBe(404);
  });

  it("422 for an unknown agent type, a name over the limit, ids that are not UUIDs and a bad scope", async () => {
    const res = await call("POST", "/v1/voice_agents", {
      name: "n".repeat(256),
      agent_type: "robot_agent",
      agent_configuration: {},
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ type: "string_too_long", loc: ["body", "name"] }),
      {
        type: "enum",
        loc: ["body", "agent_type"],
        msg: "Input should be 'managed_agent', 'vendorA_agent', 'vendorD_agent' or 'vendorB_agent'",
        input: "robot_agent",
        ctx: { expected: "'managed_agent', 'vendorA_agent', 'vendorD_agent' or 'vendorB_agent'" },
      },
    ]);
    for (const [method, path] of [
      ["GET", "/v1/voice_agents/agent-1"],
      ["PATCH", "/v1/voice_agents/agent-1"],
      ["DELETE", "/v1/voice_agents/agent-1"],
      ["GET", "/v1/llm-configurations/llm-1"],
      ["DELETE", "/v1/secrets/secret-1"],
    ] as const) {
      const r = await call(method, path, method === "PATCH" ? {} : undefined);
      expect(r.status, `${method} ${path}`).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", expect.any(String)] });
    }
    const scope = await call("GET", "/v1/voice_agents?scope=everyone");
    expect(scope.status).toBe(422);
    expect(scope.body.detail[0]).toMatchObject({ type: "enum", loc: ["query", "scope"] });
  });

  it("422 for a configuration that does not match the agent type", async () => {
    const sid = await secretId("VENDORD_API_KEY");
    const foreign = await call("POST", "/v1/voice_agents", {
      name: "x",
      agent_type: "managed_agent",
      agent_configuration: { secret_id: sid, agent_id: "a" },
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail).toEqual([
      expect.objectContaining({
        type: "value_error",
        loc: ["body", "agent_configuration"],
        msg: "Value error, agent_configuration does not match agent_type managed_agent: secret_id, agent_id belong to another agent type",
      }),
    ]);
    const missingFields = await call("POST", "/v1/voice_agents", {
      name: "x",
      agent_type: "vendorB_agent",
      agent_configuration: { voice_id: publicVoice?.id },
    });
    expect(detailTypes(missingFields.body)).toEqual([["missing", "body.agent_configuration.secret_id"]]);
    const absent = await call("POST", "/v1/voice_agents", { name: "x", agent_type: "vendorA_agent" });
    expect(detailTypes(absent.body)).toEqual([["missing", "body.agent_configuration"]]);
    const wrongVoice = await call("POST", "/v1/voice_agents", {
      name: "x",
      agent_type: "vendorB_agent",
      agent_configuration: { model: "gpt-live-1", voice: "alloy", secret_id: sid },
    });
    expect(detailTypes(wrongVoice.body)).toEqual([["value_error", "body.agent_configuration"]]);

    // PATCH: a configuration alone is checked against the stored type.
    const agent = await created("POST", "/v1/voice_agents", { name: "m", agent_type: "managed_agent" });
    const patch = await call("PATCH", `/v1/voice_agents/${agent.id}`, {
      agent_configuration: { agent_id: "a", secret_id: sid },
    });
    expect(detailTypes(patch.body)).toEqual([["value_error", "body.agent_configuration"]]);
    const typeOnly = await call("PATCH", `/v1/voice_agents/${agent.id}`, { agent_type: "vendorD_agent" });
    expect(detailTypes(typeOnly.body)).toEqual([["missing", "body.agent_configuration"]]);
    const switched = await created("PATCH", `/v1/voice_agents/${agent.id}`, {
      agent_type: "vendorD_agent",
      agent_configuration: { agent_id: "a", secret_id: sid },
    });
    expect(switched.agent_type).toBe("vendorD_agent");
  });

  it("404 naming the field for ids in the configuration that do not exist, 400 for a key of another provider", async () => {
    const unknownVoice = await call("POST", "/v1/voice_agents", {
      name: "x",
      agent_type: "managed_agent",
      agent_configuration: { voice_id: MISSING },
    });
    expect(unknownVoice).toMatchObject({ status: 404, body: { code: 4040, data: null } });
    expect(unknownVoice.body.message).toContain("agent_configuration.voice_id");
    const wrongKey = await call("POST", "/v1/voice_agents", {
      name: "x",
      agent_type: "vendorA_agent",
      agent_configuration: { secret_id: await secretId("VENDORE_API_KEY"), agent_id: "a" },
    });
    expect(wrongKey).toMatchObject({ status: 400, body: { code: 4000 } });
    expect(wrongKey.body.message).toContain("agent_configuration.secret_id");
  });
});

describe("LLM configurations", () => {
  it("create, list, get, update and delete", async () => {
    const sid = await secretId();
    const conf = await created("POST", "/v1/llm-configurations", {
      display_name: "Local",
      model_name: "llama3",
      secret_id: sid,
      base_url: "http://127.0.0.1:11434/v1",
    });
    expect(conf).toMatchObject({
      display_name: "Local",
      model_name: "llama3",
      secret_id: sid,
      base_url: "http://127.0.0.1:11434/v1",
    });
    expect(await created("GET", "/v1/llm-configurations")).toEqual([conf]);
    expect(await created("GET", `/v1/llm-configurations/${conf.id}`)).toEqual(conf);
    const changed = await created("PATCH", `/v1/llm-configurations/${conf.id}`, {
      display_name: "Renamed",
      base_url: null,
    });
    expect(changed).toMatchObject({ display_name: "Renamed", base_url: conf.base_url });
    expect(await created("DELETE", `/v1/llm-configurations/${conf.id}`)).toBeNull();
    expect((await call("DELETE", `/v1/llm-configurations/${conf.id}`)).status).toBe(404);
  });

  it("422 for a base URL that is not http(s), names over the limit and a secret id that is not a UUID", async () => {
    const res = await call("POST", "/v1/llm-configurations", {
      display_name: "d".repeat(256),
      model_name: "m",
      secret_id: "secret-1",
      base_url: "ftp://llm.example",
    });
    expect(detailTypes(res.body)).toEqual([
      ["string_too_long", "body.display_name"],
      ["uuid_parsing", "body.secret_id"],
      ["url_scheme", "body.base_url"],
    ]);
  });

  it("422 for a base URL with user info or a fragment (our path would move into the fragment)", async () => {
    const sid = await secretId();
    for (const [base_url, msg] of <[string, string][]>[
      ["http://user:pw@llm.example/v1", "Value error, URL must not contain a user name or password"],
      [
        "http://127.0.0.1:7001/avatar.tokens.v1.TokensService/RotateSigningKey#",
        "Value error, URL must not contain a fragment (#)",
      ],
    ]) {
      const body = { display_name: "x", model_name: "m", secret_id: sid, base_url };
      const res = await call("POST", "/v1/llm-configurations", body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        {
          type: "value_error",
          loc: ["body", "base_url"],
          msg,
          input: base_url,
          ctx: { error: msg.slice(13) },
        },
      ]);
    }
  });
});

describe("embeds", () => {
  it("creates an embed with a url under the public base and an iframe snippet for it", async () => {
    const embed = await created("POST", "/v2/embeddings", {
      avatar_id: demoAvatar?.id,
      voice_id: publicVoice?.id,
    });
    expect(embed).toEqual({
      embed_id: expect.any(String),
      url: `${suite.gatewayUrl}/embed/${embed.embed_id}`,
      script: expect.stringContaining(`src="${suite.gatewayUrl}/embed/${embed.embed_id}"`),
      orientation: "horizontal",
      video_settings: { quality: "high", encoding: "H264" },
      // The visitor limits' defaults (README, decisions).
      max_concurrent_sessions: 3,
      max_sessions_per_hour: 30,
      allowed_origins: [],
      is_disabled: false,
    });
    expect(embed.script).toMatch(/^<iframe .*aspect-ratio: 16 \/ 9;.*><\/iframe>$/);
    const vertical = await created("POST", "/v2/embeddings", {
      avatar_id: demoAvatar?.id,
      orientation: "vertical",
    });
    expect(vertical.orientation).toBe("vertical");
    expect(vertical.script).toContain("aspect-ratio: 9 / 16");
  });

  it("takes a voice agent alone: with a voice or context it is a 400", async () => {
    const agent = await created("POST", "/v1/voice_agents", { name: "e", agent_type: "managed_agent" });
    const ok = await created("POST", "/v2/embeddings", {
      avatar_id: demoAvatar?.id,
      voice_agent_id: agent.id,
    });
    expect(ok.embed_id).toBeDefined();
    const both = await call("POST", "/v2/embeddings", {
      avatar_id: demoAvatar?.id,
      voice_agent_id: agent.id,
      voice_id: publicVoice?.id,
    });
    expect(both).toMatchObject({ status: 400, body: { code: 4000, data: null } });
  });

  it("runs sandbox embeds on sandbox-enabled avatars and checks the duration against the tier", async () => {
    expect(
      (await created("POST", "/v2/embeddings", { avatar_id: sandboxAvatar?.id, is_sandbox: true })).embed_id,
    ).toBeDefined();
    expect(
      (await call("POST", "/v2/embeddings", { avatar_id: plainAvatar?.id, is_sandbox: true })).status,
    ).toBe(400);
    const tooLong = await call("POST", "/v2/embeddings", {
      avatar_id: demoAvatar?.id,
      max_session_duration: 10_000_000,
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail[0]).toMatchObject({
      type: "less_than_equal",
      loc: ["body", "max_session_duration"],
    });
    expect(
      (await created("POST", "/v2/embeddings", { avatar_id: demoAvatar?.id, max_session_duration: 60 }))
        .embed_id,
    ).toBeDefined();
  });

  it("404 for an unknown avatar, 422 for bad ids and orientations", async () => {
    expect((await call("POST", "/v2/embeddings", { avatar_id: MISSING })).status).toBe(404);
    const res = await call("POST", "/v2/embeddings", {
      avatar_id: "a1",
      orientation: "diagonal",
      voice_agent_id: 5,
    });
    expect(detailTypes(res.body)).toEqual([
      ["uuid_parsing", "body.avatar_id"],
      ["uuid_type", "body.voice_agent_id"],
      ["enum", "body.orientation"],
    ]);
  });
});
