// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what contexts are about
/**
 * The tokens service caches what a mint reads from the agents service (a context, a voice agent, an LLM
 * configuration, a secret's type). A mint sent the moment a change of them was answered must meet the
 * change: each test mints once (so the value is cached), changes it over HTTP, and mints again at once.
 * On the in-process bus, and on a real NATS server when TEST_NATS_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grant, json, startTestSuite, type TestSuite } from "./support.js";
import { ADA, claimsOf, expectError, KeyRing, postToken, VOICES } from "./token-support.js";

let suite: TestSuite;
let keys: KeyRing;

beforeAll(async () => {
  suite = await startTestSuite();
  keys = new KeyRing(suite);
  await grant(suite, "1000");
});
afterAll(async () => {
  await suite?.stop();
});

/** A public write with a key of the demo space; its `data`. */
async function write(method: string, path: string, body?: unknown) {
  const res = await suite.request(method, path, {
    headers: { "X-API-KEY": await keys.next() },
    ...(body !== undefined ? { body } : {}),
  });
  const payload = await json(res);
  expect({ status: res.status, payload }).toMatchObject({ status: 200, payload: { code: 100 } });
  return payload.data;
}

/** A sandbox mint (its token carries the resolved configuration); the resolved configuration. */
async function resolved(body: Record<string, unknown>) {
  const res = await postToken(suite, keys, { avatar_id: ADA.id, is_sandbox: true, ...body });
  const payload = await json(res);
  expect({ status: res.status, payload }).toMatchObject({ status: 200, payload: { code: 100 } });
  return claimsOf(payload.data.session_token).start_session_data.resolved;
}

const refused = async (body: Record<string, unknown>, status: number) =>
  expectError(await postToken(suite, keys, { avatar_id: ADA.id, is_sandbox: true, ...body }), status);

async function secret(secret_type: string): Promise<string> {
  const data = await write("POST", "/v1/secrets", {
    secret_name: "k",
    secret_value: "sk-after-changes",
    secret_type,
    allowed_hosts: ["127.0.0.1"],
  });
  return data.id;
}

describe("a mint right after a change meets the change", () => {
  it("a context's new prompt, its new required variable, then its deletion", async () => {
    const context = await write("POST", "/v1/contexts", { name: "c", prompt: "first" });
    const persona = { avatar_persona: { context_id: context.id } };
    expect((await resolved(persona)).prompt).toBe("first");

    await write("PATCH", `/v1/contexts/${context.id}`, { prompt: "second" });
    expect((await resolved(persona)).prompt).toBe("second");

    await write("PATCH", `/v1/contexts/${context.id}`, { prompt: "Hello ${who}" });
    expect(await refused(persona, 400)).toMatch(/Missing required dynamic variables: who/);
    expect((await resolved({ ...persona, dynamic_variables: { who: "Ada" } })).prompt).toBe("Hello Ada");

    await write("DELETE", `/v1/contexts/${context.id}`);
    expect(await refused(persona, 404)).toMatch(/Context not found/);
  });

  it("a voice agent's new language, then its deletion", async () => {
    const agent = await write("POST", "/v1/voice_agents", {
      name: "a",
      agent_type: "managed_agent",
      agent_configuration: { voice_id: VOICES[0]?.id, language: "en" },
    });
    const ref = { voice_agent: { id: agent.id } };
    expect((await resolved(ref)).language).toBe("en");

    await write("PATCH", `/v1/voice_agents/${agent.id}`, {
      agent_configuration: { voice_id: VOICES[0]?.id, language: "fr" },
    });
    expect((await resolved(ref)).language).toBe("fr");

    await write("DELETE", `/v1/voice_agents/${agent.id}`);
    expect(await refused(ref, 404)).toMatch(/Voice agent not found/);
  });

  it("an LLM configuration's deletion", async () => {
    const llm = await write("POST", "/v1/llm-configurations", {
      display_name: "Local",
      model_name: "llama3",
      secret_id: await secret("VENDORB_API_KEY"),
      base_url: "http://127.0.0.1:11434/v1",
    });
    const body = { llm_configuration_id: llm.id };
    expect((await resolved(body)).llm_configuration_id).toBe(llm.id);

    await write("DELETE", `/v1/llm-configurations/${llm.id}`);
    expect(await refused(body, 404)).toMatch(/LLM configuration not found/);
  });

  it("a secret's deletion (a LITE agent's key)", async () => {
    const key = await secret("VENDORA_API_KEY");
    const body = { mode: "LITE", vendorA_agent_config: { secret_id: key, agent_id: "agent-1" } };
    expect((await resolved(body)).lite.vendor_a_agent.secret_id).toBe(key);

    await write("DELETE", `/v1/secrets/${key}`);
    expect(await refused(body, 404)).toMatch(/Secret not found/);
  });
});
