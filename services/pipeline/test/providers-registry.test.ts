import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SecretType } from "@avatar/contracts/agents";
import { SessionMode } from "@avatar/contracts/common";
import { type LanguageModel, LocalEspeakSynthesizer, ProviderError } from "@avatar/providers";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatCompletionsServer } from "../../../packages/providers/test/servers/chat-completions-server.js";
import { sessionProviders } from "../src/providers/registry.js";
import type { SessionProviders } from "../src/providers/session-providers.js";
import { RecordingSession } from "./full-harness.js";
import { FakeServices } from "./providers-fakes.js";

const ENV = {
  PROVIDER_VENDORA_URL: "ws://127.0.0.1:9/a",
  PROVIDER_VENDORA_API_KEY: "managed-vendor-a-key",
  PROVIDER_VENDORE_URL: "ws://127.0.0.1:9/e",
  PROVIDER_VENDORE_API_KEY: "managed-vendor-e-key",
  PROVIDER_VENDORD_URL: "ws://127.0.0.1:9/d",
  PROVIDER_VENDORB_REALTIME_URL: "ws://127.0.0.1:9/realtime",
  PROVIDER_VENDORC_URL: "ws://127.0.0.1:9/live",
  PROVIDER_STTVENDOR2_URL: "ws://127.0.0.1:9/s2",
  PROVIDER_STTVENDOR2_API_KEY: "managed-stt2-key",
  PROVIDER_STTVENDOR3_URL: "ws://127.0.0.1:9/s3",
  PROVIDER_STTVENDOR3_API_KEY: "managed-stt3-key",
};

let chat: ChatCompletionsServer;
let fakes: FakeServices;
beforeAll(async () => {
  chat = await ChatCompletionsServer.start();
});
afterAll(async () => {
  await chat.close();
});
beforeEach(() => {
  fakes = new FakeServices();
});

function providersFor(session: RecordingSession, env: Record<string, string> = ENV): SessionProviders {
  return sessionProviders({ clients: fakes.clients, env, log: session.log })(session);
}

/** What a model sends: one request to the local chat-completions server, recorded there. */
async function ask(model: LanguageModel, modelName: string) {
  chat.enqueue({ kind: "stream", pieces: ["ok"] });
  const pieces: string[] = [];
  for await (const piece of model.stream({ model: modelName, messages: [{ role: "user", content: "hi" }] })) {
    pieces.push(piece);
  }
  expect(pieces).toEqual(["ok"]);
  return chat.requests.at(-1);
}

describe("speech synthesis", () => {
  it("follows the voice settings' engine, with the catalog voice's id for it and the public setting names", async () => {
    const voiceId = fakes.addVoice({ vendorA: "a-voice", vendorE: "e-voice", vendorD: "d-voice" });
    const cases = [
      {
        settings: {
          case: "vendorA",
          value: {
            speed: 1.1,
            stability: 0.4,
            similarityBoost: 0.6,
            model: "vendorA_v3",
            useSpeakerBoost: true,
          },
        },
        name: "vendorA",
        providerVoice: "a-voice",
        expected: {
          speed: 1.1,
          stability: 0.4,
          similarity_boost: 0.6,
          style: 0,
          use_speaker_boost: true,
          model: "vendorA_v3",
          apply_language_text_normalization: false,
        },
      },
      {
        settings: { case: "vendorE", value: { speed: 0.9, model: "s2", latencyMode: "low" } },
        name: "vendorE",
        providerVoice: "e-voice",
        expected: { speed: 0.9, model: "s2", latency_mode: "low" },
      },
      {
        settings: { case: "vendorD", value: { speed: 1.4, model: "sonic-3" } },
        name: "vendorD",
        providerVoice: "d-voice",
        expected: { speed: 1.4, model: "sonic-3" },
      },
    ] as const;
    for (const c of cases) {
      const session = new RecordingSession({ voiceId, voiceSettings: { provider: c.settings } });
      const spaceKey = fakes.addSecret(session.spaceId, SecretType.VENDORD_API_KEY, "space-vendor-d-key");
      const chosen = await providersFor(session).synthesizer();
      expect(chosen.synthesizer.name).toBe(c.name);
      expect(chosen.voiceId).toBe(c.providerVoice);
      expect(chosen.settings).toEqual(c.expected);
      // vendorD has no managed key here: it runs on the space's own vendorD secret.
      const expectedKey = c.name === "vendorD" ? `space secret ${spaceKey}` : "managed";
      expect(
        session.logLines.some((l) => l.includes('"speech synthesis chosen"') && l.includes(expectedKey)),
      ).toBe(true);
    }
  });

  it("speaks locally in a sandbox, without touching the space's secrets", async () => {
    const session = new RecordingSession({
      isSandbox: true,
      voiceId: "voice-x",
      voiceSettings: { provider: { case: "vendorA", value: { speed: 1.2 } } },
    });
    fakes.addSecret(session.spaceId, SecretType.VENDORA_API_KEY, "space-vendor-a-key");
    const chosen = await providersFor(session).synthesizer();
    expect(chosen.synthesizer.name).toBe("localEspeak");
    expect(chosen.settings).toMatchObject({ speed: 1.2 });
    expect(fakes.calls).toEqual([]);
  });

  it("has the local synthesizer prepare the voice of the session's language as the session chooses it", async () => {
    const prepare = vi.spyOn(LocalEspeakSynthesizer.prototype, "prepare");
    try {
      const french = new RecordingSession({ isSandbox: true, language: "fr-FR" });
      const providers = sessionProviders({ clients: fakes.clients, env: ENV, log: french.log });
      await providers(french).synthesizer();
      await providers(new RecordingSession({ isSandbox: true, language: "" })).synthesizer();
      expect(prepare.mock.calls).toEqual([["fr-FR"], [undefined]]);
    } finally {
      prepare.mockRestore();
    }
  });

  it("falls back to the local synthesizer (with one warning) for an engine this service cannot reach", async () => {
    const session = new RecordingSession({
      voiceId: fakes.addVoice({ vendorD: "d" }),
      voiceSettings: { provider: { case: "vendorD", value: { model: "sonic-3" } } },
    });
    const providers = providersFor(session, { PROVIDER_VENDORA_URL: "ws://127.0.0.1:9" });
    expect((await providers.synthesizer()).synthesizer.name).toBe("localEspeak");
    await providers.synthesizer();
    expect(session.ofType("warning")).toEqual([
      expect.objectContaining({
        warning: { type: "speech_synthesis_unavailable", message: expect.stringContaining("vendorD") },
      }),
    ]);
  });

  it("a voice without an id for the engine is a provider error", async () => {
    const session = new RecordingSession({
      voiceId: fakes.addVoice({ vendorE: "e" }),
      voiceSettings: { provider: { case: "vendorA", value: {} } },
    });
    const error = await providersFor(session)
      .synthesizer()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("bad_request");
  });
});

describe("speech recognition", () => {
  it("takes the session's stt_config provider, else the first one configured", async () => {
    const asked = new RecordingSession({ sttConfig: { provider: "sttvendor3" } });
    expect((await providersFor(asked).recognizer())?.name).toBe("sttvendor3");
    const automatic = new RecordingSession({});
    expect((await providersFor(automatic).recognizer())?.name).toBe("sttvendor2");
    expect([...asked.ofType("warning"), ...automatic.ofType("warning")]).toEqual([]);
  });

  it("substitutes a configured provider (with a warning) for one this service cannot reach", async () => {
    const session = new RecordingSession({ sttConfig: { provider: "sttvendor1" } });
    expect((await providersFor(session).recognizer())?.name).toBe("sttvendor2");
    expect(session.ofType("warning")[0]?.warning).toMatchObject({ type: "speech_recognition_substituted" });
  });

  it("uses vendorA recognition (on the space's vendorA key) only when its model id is configured", async () => {
    const session = new RecordingSession({ sttConfig: { provider: "vendorA" } });
    const env = { PROVIDER_VENDORA_URL: "ws://127.0.0.1:9" };
    fakes.addSecret(session.spaceId, SecretType.VENDORA_API_KEY, "space-vendor-a-key");
    expect(await providersFor(session, env).recognizer()).toBeNull();
    const withModel = providersFor(session, { ...env, PROVIDER_VENDORA_STT_MODEL: "realtime-model" });
    expect((await withModel.recognizer())?.name).toBe("vendorA");
  });

  it("has none in a sandbox and none when nothing is configured", async () => {
    expect(await providersFor(new RecordingSession({ isSandbox: true })).recognizer()).toBeNull();
    expect(await providersFor(new RecordingSession({}), {}).recognizer()).toBeNull();
  });
});

describe("the language model", () => {
  it("runs a stored LLM configuration on its base_url and model_name with its secret revealed from the space", async () => {
    const session = new RecordingSession({});
    const secretId = fakes.addSecret(session.spaceId, SecretType.VENDORB_API_KEY, "space-llm-key-123");
    const llmConfigurationId = fakes.addLlmConfiguration(session.spaceId, {
      modelName: "my-model-7b",
      baseUrl: chat.baseUrl,
      secretId,
    });
    const s2 = new RecordingSession({ llmConfigurationId }, session.spaceId);
    const chosen = await providersFor(s2, {
      ...ENV,
      PROVIDER_VENDORB_URL: "http://127.0.0.1:9/v1",
      // The operator allowed the self-hosted model's loopback address.
      EGRESS_ALLOW: new URL(chat.baseUrl).host,
    }).languageModel();
    expect(chosen?.modelName).toBe("my-model-7b");
    const request = await ask(chosen?.model as LanguageModel, chosen?.modelName ?? "");
    expect(request?.headers.authorization).toBe("Bearer space-llm-key-123");
    expect(request?.body?.model).toBe("my-model-7b");
    expect(fakes.calls).toEqual([`revealSecret ${secretId}`]);
  });

  it("refuses a stored LLM configuration's base_url on loopback unless the operator allowed it", async () => {
    const session = new RecordingSession({});
    const secretId = fakes.addSecret(session.spaceId, SecretType.VENDORB_API_KEY, "space-llm-key-123");
    const llmConfigurationId = fakes.addLlmConfiguration(session.spaceId, {
      modelName: "my-model-7b",
      baseUrl: chat.baseUrl,
      secretId,
    });
    const chosen = await providersFor(
      new RecordingSession({ llmConfigurationId }, session.spaceId),
      ENV,
    ).languageModel();
    const before = chat.requests.length;
    const model = chosen?.model as LanguageModel;
    const stream = model.stream({ model: "my-model-7b", messages: [] });
    const error = await (async () => {
      for await (const _ of stream) return undefined;
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "bad_request",
      message: expect.stringContaining("base_url refused"),
    });
    expect(chat.requests.length).toBe(before);
  });

  it("runs the managed model on the space's newest vendorB secret, else on the managed key", async () => {
    const env = { PROVIDER_VENDORB_URL: chat.baseUrl, PROVIDER_VENDORB_API_KEY: "managed-vendor-b-key" };
    const session = new RecordingSession({ llmSettings: { provider: "vendorB", model: "gpt-4o" } });
    const other = new RecordingSession({});
    fakes.addSecret(session.spaceId, SecretType.VENDORB_API_KEY, "older-space-key", Date.now() - 60_000);
    fakes.addSecret(session.spaceId, SecretType.VENDORB_API_KEY, "newer-space-key");
    fakes.addSecret(other.spaceId, SecretType.VENDORB_API_KEY, "another-space-key");
    fakes.addSecret(session.spaceId, SecretType.VENDORA_API_KEY, "wrong-type-key");

    const own = await providersFor(session, env).languageModel();
    const ownRequest = await ask(own?.model as LanguageModel, own?.modelName ?? "");
    expect(ownRequest?.headers.authorization).toBe("Bearer newer-space-key");
    expect(ownRequest?.body?.model).toBe("gpt-4o");

    const bare = new RecordingSession({});
    const managed = await providersFor(bare, env).languageModel();
    const managedRequest = await ask(managed?.model as LanguageModel, managed?.modelName ?? "");
    expect(managedRequest?.headers.authorization).toBe("Bearer managed-vendor-b-key");
    expect(managedRequest?.body?.model).toBe("gpt-5.4-nano");
  });

  it("a sandbox uses the local endpoint, or has no model without one", async () => {
    const env = {
      PROVIDER_VENDORB_URL: "http://127.0.0.1:9/v1",
      PROVIDER_VENDORB_API_KEY: "k-managed",
      LOCAL_LLM_URL: chat.baseUrl,
      LOCAL_LLM_MODEL: "llama-local",
    };
    const local = await providersFor(new RecordingSession({ isSandbox: true }), env).languageModel();
    expect(local?.modelName).toBe("llama-local");
    const request = await ask(local?.model as LanguageModel, local?.modelName ?? "");
    expect(request?.headers.authorization).toBeUndefined();
    expect(await providersFor(new RecordingSession({ isSandbox: true }), ENV).languageModel()).toBeNull();
  });

  it("asks once per session, and again after a failure", async () => {
    const session = new RecordingSession({ llmConfigurationId: "00000000-0000-4000-8000-000000000009" });
    const providers = providersFor(session);
    const error = await providers.languageModel().catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "bad_request",
      message: expect.stringContaining("no longer exists"),
    });
    const keyed = new RecordingSession({});
    fakes.addSecret(keyed.spaceId, SecretType.VENDORB_API_KEY, "space-b");
    const p = providersFor(keyed, { PROVIDER_VENDORB_URL: chat.baseUrl });
    const [a, b] = await Promise.all([p.languageModel(), p.languageModel()]);
    expect(a).toBe(b);
    expect(fakes.calls.filter((c) => c === "listSecrets")).toHaveLength(1);
  });
});

describe("a secret goes only where it may (finding 2)", () => {
  const llmSession = (allowedHosts: string[], vendorBUrl = "https://api.vendor-b.example/v1") => {
    const session = new RecordingSession({});
    const secretId = fakes.addSecret(
      session.spaceId,
      SecretType.VENDORB_API_KEY,
      "space-llm-key-123",
      Date.now(),
      allowedHosts,
    );
    const llmConfigurationId = fakes.addLlmConfiguration(session.spaceId, {
      modelName: "m",
      baseUrl: chat.baseUrl,
      secretId,
    });
    const env = { PROVIDER_VENDORB_URL: vendorBUrl, EGRESS_ALLOW: new URL(chat.baseUrl).host };
    return providersFor(new RecordingSession({ llmConfigurationId }, session.spaceId), env);
  };

  it("an LLM configuration's key is not revealed to a base_url its secret is not bound to", async () => {
    const before = chat.requests.length;
    const error = await llmSession([])
      .languageModel()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "unauthorized",
      message: expect.stringContaining("may not be sent"),
    });
    expect(chat.requests.length).toBe(before);
  });

  it("a model echoing the key back, even split across pieces, never shows or stores it", async () => {
    const chosen = await llmSession(["127.0.0.1"]).languageModel();
    chat.enqueue({ kind: "stream", pieces: ["Your key is space-llm", "-key-", "123, right?"] });
    let answer = "";
    const model = chosen?.model as LanguageModel;
    for await (const piece of model.stream({ model: "m", messages: [{ role: "user", content: "key?" }] })) {
      answer += piece;
    }
    expect(answer).toBe("Your key is [secret], right?");
  });

  it("a LITE configuration naming a secret of another provider type does not send it there", async () => {
    const session0 = new RecordingSession({});
    const bKey = fakes.addSecret(session0.spaceId, SecretType.VENDORB_API_KEY, "vendor-b-key-0001");
    const session = new RecordingSession(
      { mode: SessionMode.LITE, lite: { vendorAAgent: { secretId: bKey, agentId: "agent-1" } } },
      session0.spaceId,
    );
    const env = { PROVIDER_VENDORA_URL: "ws://localhost:9", PROVIDER_VENDORB_URL: "http://127.0.0.1:9/v1" };
    const error = await providersFor(session, env)
      .conversation()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "unauthorized",
      message: expect.stringContaining("may not be sent"),
    });
  });
});

describe("LITE conversation providers", () => {
  it("runs the configured realtime model or hosted agent on the secret it names", async () => {
    const session0 = new RecordingSession({});
    const space = session0.spaceId;
    const bKey = fakes.addSecret(space, SecretType.VENDORB_API_KEY, "space-realtime-b");
    const cKey = fakes.addSecret(space, SecretType.VENDORC_API_KEY, "space-live-c");
    const aKey = fakes.addSecret(space, SecretType.VENDORA_API_KEY, "space-agent-a");
    const dKey = fakes.addSecret(space, SecretType.VENDORD_API_KEY, "space-agent-d");
    const lite = (config: object) =>
      new RecordingSession({ mode: SessionMode.LITE, prompt: "Be brief.", language: "de", ...config }, space);

    const b = await providersFor(
      lite({
        lite: {
          vendorBRealtime: { secretId: bKey, model: "gpt-realtime-mini", voice: "ash", temperature: 0.7 },
        },
      }),
    ).conversation();
    expect(b?.provider.name).toBe("vendorB");
    expect(b?.options).toEqual({
      apiKey: "space-realtime-b",
      model: "gpt-realtime-mini",
      voice: "ash",
      temperature: 0.7,
      instructions: "Be brief.",
      language: "de",
    });

    const c = await providersFor(
      lite({ lite: { vendorCRealtime: { secretId: cKey, voice: "Kore", temperature: 0 } } }),
    ).conversation();
    expect(c?.provider.name).toBe("vendorC");
    expect(c?.options).toMatchObject({
      apiKey: "space-live-c",
      voice: "Kore",
      temperature: 0,
      instructions: "Be brief.",
    });

    const a = await providersFor(
      lite({
        lite: {
          vendorAAgent: {
            secretId: aKey,
            agentId: "agent-1",
            voiceId: "voice-9",
            dynamicVariables: { values: { n: { kind: { case: "numberValue", value: 3 } } } },
          },
        },
      }),
    ).conversation();
    expect(a?.provider.name).toBe("vendorA");
    expect(a?.options).toEqual({
      apiKey: "space-agent-a",
      agentId: "agent-1",
      voice: "voice-9",
      dynamicVariables: { n: 3 },
    });

    const d = await providersFor(
      lite({ lite: { vendorDAgent: { secretId: dKey, agentId: "agent-2" } } }),
    ).conversation();
    expect(d?.provider.name).toBe("vendorD");
    expect(d?.options).toEqual({ apiKey: "space-agent-d", agentId: "agent-2" });

    expect(
      await providersFor(lite({ lite: { transportA: { transportAUrl: "wss://x" } } })).conversation(),
    ).toBeNull();
  });

  it("a deleted secret or an unconfigured provider is a provider error", async () => {
    const s = new RecordingSession({
      mode: SessionMode.LITE,
      lite: { vendorBRealtime: { secretId: "00000000-0000-4000-8000-00000000000b" } },
    });
    await expect(providersFor(s).conversation()).rejects.toMatchObject({
      kind: "unauthorized",
      provider: "vendorB",
    });
    const key = fakes.addSecret(s.spaceId, SecretType.VENDORC_API_KEY, "c-key");
    const s2 = new RecordingSession(
      { mode: SessionMode.LITE, lite: { vendorCRealtime: { secretId: key } } },
      s.spaceId,
    );
    await expect(providersFor(s2, {}).conversation()).rejects.toMatchObject({
      kind: "unavailable",
      provider: "vendorC",
    });
  });
});

describe("secret values", () => {
  let echo: Server;
  let echoUrl: string;
  beforeAll(async () => {
    // A provider that echoes the request's key in its error answer.
    echo = createServer((req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `bad key: ${req.headers.authorization}` } }));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  it("never appear in a log line, a warning or a provider error", async () => {
    const session = new RecordingSession({ sttConfig: { provider: "sttvendor1" } });
    const secretValues = [
      "space-secret-value-b1",
      "space-secret-value-a1",
      "managed-stt2-key",
      "managed-vendor-a-key",
    ];
    fakes.addSecret(session.spaceId, SecretType.VENDORB_API_KEY, secretValues[0] as string);
    fakes.addSecret(session.spaceId, SecretType.VENDORA_API_KEY, secretValues[1] as string);
    const providers = sessionProviders({
      clients: fakes.clients,
      env: { ...ENV, PROVIDER_VENDORB_URL: echoUrl },
      log: session.log,
    })(session);
    await providers.synthesizer().catch(() => {});
    await providers.recognizer();
    const chosen = await providers.languageModel();
    const error = await (async () => {
      for await (const _ of chosen?.model.stream({
        model: "m",
        messages: [{ role: "user", content: "x" }],
      }) ?? []) {
        // nothing arrives
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain("bad key: Bearer [secret]");

    const everything = [...session.logLines, JSON.stringify(session.events), (error as Error).message].join(
      "\n",
    );
    expect(session.logLines.length).toBeGreaterThan(3);
    for (const value of secretValues) expect(everything).not.toContain(value);
  });
});
