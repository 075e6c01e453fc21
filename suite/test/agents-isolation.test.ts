import { randomUUID } from "node:crypto";
import { readCatalogFile } from "@avatar/catalog";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Space isolation: every operation on contexts, voice agents, secrets, LLM configurations, embeds and
 * avatars, run with the API key of another space against the demo space's resources (by path, or by
 * id inside the body), is a 404 exactly like a missing resource, and changes nothing.
 */

let suite: TestSuite;
let keyB: string;
const publicAvatar = readCatalogFile().public_avatars[0];

/** The demo space's resources (A) and the other space's own ones (B). */
const a = { context: "", agent: "", secret: "", llm: "", avatar: randomUUID(), voice: randomUUID() };
const b = { agent: "", secret: "", llm: "", avatar: randomUUID() };

async function call(key: string, method: string, path: string, body?: unknown) {
  for (;;) {
    const res = await suite.request(method, path, {
      headers: { "X-API-KEY": key },
      ...(body !== undefined ? { body } : {}),
    });
    if (res.status === 429) {
      await atNextSecond();
      continue;
    }
    return { status: res.status, body: await json(res) };
  }
}

async function data(key: string, method: string, path: string, body?: unknown) {
  const res = await call(key, method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  suite = await startTestSuite();
  const other = await suite.clients.tokens.createSpace({ name: "Other space" });
  keyB = other.apiKeySecret;
  const spaceB = other.space?.id ?? "";
  const A = suite.apiKey;

  await suite.clients.catalog.importVoices({
    voices: [{ id: a.voice, spaceId: suite.spaceId, name: "A's voice" }],
  });
  await suite.clients.catalog.importAvatars({
    avatars: [
      { id: a.avatar, spaceId: suite.spaceId, name: "A's avatar", status: AvatarStatus.ACTIVE },
      { id: b.avatar, spaceId: spaceB, name: "B's avatar", status: AvatarStatus.ACTIVE },
    ],
  });
  a.context = (await data(A, "POST", "/v1/contexts", { name: "A's context", prompt: "private" })).id;
  a.secret = (
    await data(A, "POST", "/v1/secrets", {
      secret_name: "A",
      secret_value: "sk-a",
      secret_type: "VENDORB_API_KEY",
      allowed_hosts: ["llm.example"],
    })
  ).id;
  a.llm = (
    await data(A, "POST", "/v1/llm-configurations", {
      display_name: "A's model",
      model_name: "m",
      secret_id: a.secret,
      base_url: "https://llm.example/v1",
    })
  ).id;
  a.agent = (
    await data(A, "POST", "/v1/voice_agents", { name: "A's agent", agent_type: "managed_agent" })
  ).id;

  b.secret = (
    await data(keyB, "POST", "/v1/secrets", {
      secret_name: "B",
      secret_value: "sk-b",
      secret_type: "VENDORB_API_KEY",
      allowed_hosts: ["llm.example"],
    })
  ).id;
  b.llm = (
    await data(keyB, "POST", "/v1/llm-configurations", {
      display_name: "B's model",
      model_name: "m",
      secret_id: b.secret,
      base_url: "https://llm.example/v1",
    })
  ).id;
  b.agent = (
    await data(keyB, "POST", "/v1/voice_agents", { name: "B's agent", agent_type: "managed_agent" })
  ).id;
});
afterAll(async () => {
  await suite?.stop();
});

type Case = [name: string, method: string, path: () => string, body?: () => unknown];

const managedWith = (config: object) => ({
  name: "x",
  agent_type: "managed_agent",
  agent_configuration: config,
});

const cases: Case[] = [
  // Contexts
  ["get a context", "GET", () => `/v1/contexts/${a.context}`],
  ["update a context", "PATCH", () => `/v1/contexts/${a.context}`, () => ({ name: "taken" })],
  ["delete a context", "DELETE", () => `/v1/contexts/${a.context}`],
  ["copy a private context", "POST", () => `/v1/contexts/${a.context}/copy`, () => ({})],
  // Voice agents
  ["get a voice agent", "GET", () => `/v1/voice_agents/${a.agent}`],
  ["update a voice agent", "PATCH", () => `/v1/voice_agents/${a.agent}`, () => ({ name: "taken" })],
  [
    "update a voice agent's configuration",
    "PATCH",
    () => `/v1/voice_agents/${a.agent}`,
    () => ({ agent_configuration: { language: "en" } }),
  ],
  ["delete a voice agent", "DELETE", () => `/v1/voice_agents/${a.agent}`],
  [
    "create an agent on A's voice",
    "POST",
    () => "/v1/voice_agents",
    () => managedWith({ voice_id: a.voice }),
  ],
  [
    "create an agent on A's context",
    "POST",
    () => "/v1/voice_agents",
    () => managedWith({ context_id: a.context }),
  ],
  [
    "create an agent on A's LLM configuration",
    "POST",
    () => "/v1/voice_agents",
    () => managedWith({ llm_configuration_id: a.llm }),
  ],
  [
    "create a vendorB agent on A's secret",
    "POST",
    () => "/v1/voice_agents",
    () => ({ name: "x", agent_type: "vendorB_agent", agent_configuration: { secret_id: a.secret } }),
  ],
  [
    "create a vendorB agent on A's context",
    "POST",
    () => "/v1/voice_agents",
    () => ({
      name: "x",
      agent_type: "vendorB_agent",
      agent_configuration: { secret_id: b.secret, context_id: a.context },
    }),
  ],
  [
    "create a vendorA agent on A's secret",
    "POST",
    () => "/v1/voice_agents",
    () => ({
      name: "x",
      agent_type: "vendorA_agent",
      agent_configuration: { secret_id: a.secret, agent_id: "ag" },
    }),
  ],
  [
    "create a vendorD agent on A's secret",
    "POST",
    () => "/v1/voice_agents",
    () => ({
      name: "x",
      agent_type: "vendorD_agent",
      agent_configuration: { secret_id: a.secret, agent_id: "ag" },
    }),
  ],
  [
    "point B's agent at A's context",
    "PATCH",
    () => `/v1/voice_agents/${b.agent}`,
    () => ({ agent_configuration: { context_id: a.context } }),
  ],
  // Secrets
  ["delete a secret", "DELETE", () => `/v1/secrets/${a.secret}`],
  // LLM configurations
  ["get an LLM configuration", "GET", () => `/v1/llm-configurations/${a.llm}`],
  [
    "update an LLM configuration",
    "PATCH",
    () => `/v1/llm-configurations/${a.llm}`,
    () => ({ display_name: "taken" }),
  ],
  ["delete an LLM configuration", "DELETE", () => `/v1/llm-configurations/${a.llm}`],
  [
    "create an LLM configuration on A's secret",
    "POST",
    () => "/v1/llm-configurations",
    () => ({ display_name: "x", model_name: "m", secret_id: a.secret, base_url: "https://llm.example/v1" }),
  ],
  [
    "point B's LLM configuration at A's secret",
    "PATCH",
    () => `/v1/llm-configurations/${b.llm}`,
    () => ({ secret_id: a.secret }),
  ],
  // Embeds
  ["embed A's avatar", "POST", () => "/v2/embeddings", () => ({ avatar_id: a.avatar })],
  [
    "embed with A's voice",
    "POST",
    () => "/v2/embeddings",
    () => ({ avatar_id: b.avatar, voice_id: a.voice }),
  ],
  [
    "embed with A's context",
    "POST",
    () => "/v2/embeddings",
    () => ({ avatar_id: b.avatar, context_id: a.context }),
  ],
  [
    "embed with A's agent",
    "POST",
    () => "/v2/embeddings",
    () => ({ avatar_id: b.avatar, voice_agent_id: a.agent }),
  ],
  // Avatars and voices
  ["get an avatar", "GET", () => `/v1/avatars/${a.avatar}`],
  ["rename an avatar", "PATCH", () => `/v1/avatars/${a.avatar}`, () => ({ name: "taken" })],
  ["deactivate an avatar", "PATCH", () => `/v1/avatars/${a.avatar}`, () => ({ is_deactivated: true })],
  ["delete an avatar", "DELETE", () => `/v1/avatars/${a.avatar}`],
  [
    "give B's avatar A's voice",
    "PATCH",
    () => `/v1/avatars/${b.avatar}`,
    () => ({ default_voice_id: a.voice }),
  ],
  [
    "rename a public catalog avatar",
    "PATCH",
    () => `/v1/avatars/${publicAvatar?.id}`,
    () => ({ name: "taken" }),
  ],
  ["delete a public catalog avatar", "DELETE", () => `/v1/avatars/${publicAvatar?.id}`],
  ["get a private voice", "GET", () => `/v1/voices/${a.voice}`],
];

describe("with another space's API key", () => {
  it.each(cases)("%s: 404", async (_name, method, path, body) => {
    const res = await call(keyB, method, path(), body?.());
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body).toMatchObject({ code: 4040, data: null });
    // The resource's 404, not the router's "Not Found" for a path that does not exist.
    expect(res.body.message).toMatch(/^\S.* not found/);
  });

  it("lists nothing of the demo space", async () => {
    const lists = await Promise.all(
      ["/v1/contexts", "/v1/voice_agents", "/v1/secrets", "/v1/llm-configurations", "/v1/avatars"].map((p) =>
        data(keyB, "GET", p),
      ),
    );
    const text = JSON.stringify(lists);
    for (const id of [a.context, a.agent, a.secret, a.llm, a.avatar]) expect(text).not.toContain(id);
  });

  it("changed nothing of the demo space", async () => {
    const A = suite.apiKey;
    expect((await data(A, "GET", `/v1/contexts/${a.context}`)).name).toBe("A's context");
    expect((await data(A, "GET", `/v1/voice_agents/${a.agent}`)).name).toBe("A's agent");
    expect((await data(A, "GET", "/v1/secrets")).map((s: { id: string }) => s.id)).toContain(a.secret);
    expect((await data(A, "GET", `/v1/llm-configurations/${a.llm}`)).display_name).toBe("A's model");
    expect(await data(A, "GET", `/v1/avatars/${a.avatar}`)).toMatchObject({
      name: "A's avatar",
      status: "ACTIVE",
    });
    expect((await data(keyB, "GET", `/v1/avatars/${b.avatar}`)).default_voice).toBeNull();
    expect((await data(keyB, "GET", `/v1/llm-configurations/${b.llm}`)).secret_id).toBe(b.secret);
    expect((await data(A, "GET", `/v1/avatars/${publicAvatar?.id}`)).name).toBe(publicAvatar?.name);
  });
});
