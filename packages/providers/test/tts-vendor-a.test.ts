import { afterEach, describe, expect, it } from "vitest";
import { VendorASynthesizer } from "../src/tts/vendor-a.js";
import type { SynthesisRequest } from "../src/types.js";
import { collect, concat } from "./servers/collect.js";
import type { Failure } from "./servers/tts-peer.js";
import { knownPcm } from "./servers/tts-peer.js";
import { type VendorAPeerOptions, VendorATtsServer } from "./servers/vendor-a-tts-server.js";

const KEY = "key-a";
const AUDIO = knownPcm(24_000);
let server: VendorATtsServer | undefined;

async function peer(options: Partial<VendorAPeerOptions> = {}) {
  server = await new VendorATtsServer({ apiKey: KEY, audio: AUDIO, chunkBytes: 4_801, ...options }).start();
  return server;
}

function client(s: VendorATtsServer, apiKey = KEY) {
  return new VendorASynthesizer({ baseUrl: s.baseUrl, apiKey });
}

const request = (overrides: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
  text: "Hello there. How are you?",
  voiceId: "voice-1",
  settings: { provider: "vendorA" },
  ...overrides,
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("vendorA stream-input client", () => {
  it("sends the key, the query and the exact messages of the protocol", async () => {
    const s = await peer();
    const settings = {
      provider: "vendorA",
      model: "vendorA_flash_v2_5",
      stability: 0.4,
      similarity_boost: 0.9,
      style: 0.2,
      use_speaker_boost: false,
      speed: 1.1,
    };
    const { error } = await collect(client(s).synthesize(request({ settings, language: "en-US" })));
    expect(error).toBeUndefined();
    const [connection] = s.connections;
    expect(connection?.headers["xi-api-key"]).toBe(KEY);
    expect(connection?.url.pathname).toBe("/v1/text-to-speech/voice-1/stream-input");
    expect(Object.fromEntries(connection?.url.searchParams ?? [])).toEqual({
      model_id: "vendorA_flash_v2_5",
      output_format: "pcm_24000",
      language_code: "en",
    });
    expect(connection?.messages).toEqual([
      {
        text: " ",
        voice_settings: {
          stability: 0.4,
          similarity_boost: 0.9,
          style: 0.2,
          use_speaker_boost: false,
          speed: 1.1,
        },
      },
      { text: "Hello there. ", try_trigger_generation: true },
      { text: "How are you? ", try_trigger_generation: true, flush: true },
      { text: "" },
    ]);
    expect(s.violations).toEqual([]);
  });

  it("fills in the interface's defaults for missing settings", async () => {
    const s = await peer();
    await collect(client(s).synthesize(request()));
    expect(s.connections[0]?.messages[0]).toEqual({
      text: " ",
      voice_settings: {
        stability: 0.75,
        similarity_boost: 0.75,
        style: 0,
        use_speaker_boost: true,
        speed: 1,
      },
    });
  });

  it.each(["vendorA_v3", "vendorA_v3_conversational", "vendorA_v4_turbo"])(
    "sends only stability for %s",
    async (model) => {
      const s = await peer();
      const settings = {
        model,
        stability: 0.3,
        similarity_boost: 0.9,
        style: 0.5,
        use_speaker_boost: false,
        speed: 1.2,
      };
      await collect(client(s).synthesize(request({ settings })));
      expect(s.connections[0]?.messages[0]).toEqual({ text: " ", voice_settings: { stability: 0.3 } });
      expect(s.connections[0]?.url.searchParams.get("model_id")).toBe(model);
    },
  );

  it("asks for Japanese text normalization only for a ja session, and language_code only where the model takes it", async () => {
    const s = await peer();
    const settings = { model: "vendorA_multilingual_v2", apply_language_text_normalization: true };
    await collect(client(s).synthesize(request({ settings, language: "ja" })));
    await collect(client(s).synthesize(request({ settings, language: "en" })));
    await collect(
      client(s).synthesize(request({ settings: { model: "vendorA_multilingual_v2" }, language: "ja" })),
    );
    const queries = s.connections.map((c) => Object.fromEntries(c.url.searchParams));
    expect(queries[0]).toMatchObject({ language_code: "ja", apply_language_text_normalization: "true" });
    expect(queries[1]).not.toHaveProperty("apply_language_text_normalization");
    expect(queries[1]).not.toHaveProperty("language_code");
    expect(queries[2]).not.toHaveProperty("apply_language_text_normalization");
  });

  it("maps public model names to the operator's wire ids", async () => {
    const s = await peer();
    const synthesizer = new VendorASynthesizer({
      baseUrl: s.baseUrl,
      apiKey: KEY,
      modelIds: { vendorA_v3: "wire-model-3" },
    });
    await collect(synthesizer.synthesize(request({ settings: { model: "vendorA_v3" } })));
    expect(s.connections[0]?.url.searchParams.get("model_id")).toBe("wire-model-3");
  });

  it("yields the server's PCM byte for byte, in whole samples, though frames split samples", async () => {
    const s = await peer();
    const { chunks, error } = await collect(client(s).synthesize(request()));
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length % 2).toBe(0);
    expect(concat(chunks)).toEqual(AUDIO);
  });

  it("yields audio as it arrives, before the stream is complete", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    const iterator = client(s).synthesize(request())[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(first.value).toEqual(AUDIO.subarray(0, 4_800));
    s.release();
    const rest: Uint8Array[] = [];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(r.value);
    expect(concat([first.value as Uint8Array, ...rest])).toEqual(AUDIO);
  });

  it("closes the socket when the signal aborts mid-stream and ends quietly", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    const controller = new AbortController();
    const iterator = client(s).synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    expect((await iterator.next()).done).toBe(true);
    expect(await s.connections[0]?.closed).toBe(1000);
  });

  it("closes the socket when the consumer stops reading", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    for await (const _chunk of client(s).synthesize(request())) break;
    expect(await s.connections[0]?.closed).toBe(1000);
  });

  it("does not connect for empty text, nor for an unknown model", async () => {
    const s = await peer();
    expect((await collect(client(s).synthesize(request({ text: "   " })))).chunks).toEqual([]);
    const { error } = await collect(client(s).synthesize(request({ settings: { model: "nope" } })));
    expect(error?.kind).toBe("bad_request");
    expect(s.connections).toHaveLength(0);
  });
});

describe("vendorA errors", () => {
  const cases: Array<[string, Partial<VendorAPeerOptions>, string, RegExp, string?]> = [
    ["a bad key (error message and 1008)", {}, "unauthorized", /Invalid API key/, "wrong"],
    ["a bad key refused at the upgrade", { authFailure: "refuse" }, "unauthorized", /HTTP 401/, "wrong"],
    [
      "a quota error message",
      {
        failure: frame(
          1,
          { message: "This request exceeds your quota.", error: "quota_exceeded", code: 1008 },
          1008,
        ),
      },
      "rate_limited",
      /quota/,
    ],
    [
      "HTTP 429 at the upgrade",
      { failure: { type: "refuse", status: 429, body: '{"detail":"too_many_concurrent_requests"}' } },
      "rate_limited",
      /429/,
    ],
    [
      "a 1008 close that names a rate limit",
      { failure: { type: "close", afterChunks: 1, code: 1008, reason: "rate_limit_exceeded" } },
      "rate_limited",
      /1008/,
    ],
    [
      "a frame that is not JSON",
      { failure: { type: "frame", afterChunks: 1, frame: "{not json" } },
      "unavailable",
      /malformed.*not JSON/,
    ],
    [
      "audio that is not base64",
      { failure: frame(1, { audio: "###", isFinal: null }) },
      "unavailable",
      /malformed.*base64/,
    ],
    [
      "a binary frame",
      { failure: { type: "frame", afterChunks: 1, frame: new Uint8Array([1, 2]) } },
      "unavailable",
      /malformed.*binary/,
    ],
    ["an abrupt disconnect", { failure: { type: "abrupt", afterChunks: 1 } }, "unavailable", /abruptly/],
    [
      "a normal close before isFinal",
      { failure: { type: "close", afterChunks: 1, code: 1000 } },
      "unavailable",
      /before the end/,
    ],
    ["a server error at the upgrade", { failure: { type: "refuse", status: 503 } }, "unavailable", /503/],
  ];

  it.each(cases)("maps %s", async (_name, options, kind, message, apiKey) => {
    const s = await peer(options);
    const { chunks, error } = await collect(client(s, apiKey).synthesize(request()));
    expect(error?.provider).toBe("vendorA");
    expect(error?.kind).toBe(kind);
    expect(error?.message).toMatch(message);
    // Audio that came before a mid-stream failure was still delivered.
    if ("failure" in options && options.failure?.type !== "refuse")
      expect(concat(chunks)).toEqual(AUDIO.subarray(0, 4_800));
  });

  it("gives up on a provider that goes silent mid-stream, and closes the socket", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    const synthesizer = new VendorASynthesizer({ baseUrl: s.baseUrl, apiKey: KEY, idleTimeoutMs: 300 });
    const { chunks, error } = await collect(synthesizer.synthesize(request()));
    expect(error?.kind).toBe("unavailable");
    expect(error?.message).toMatch(/no answer for 300 ms/);
    expect(concat(chunks)).toEqual(AUDIO.subarray(0, 4_800));
    expect(await s.connections[0]?.closed).toBe(1000);
  });

  it("reports an unreachable server as unavailable", async () => {
    const s = await peer();
    const { baseUrl } = s;
    await s.stop();
    server = undefined;
    const { error } = await collect(new VendorASynthesizer({ baseUrl, apiKey: KEY }).synthesize(request()));
    expect(error?.kind).toBe("unavailable");
  });
});

function frame(afterChunks: number, body: unknown, closeCode?: number): Failure {
  return {
    type: "frame",
    afterChunks,
    frame: JSON.stringify(body),
    thenClose: closeCode ? { code: closeCode } : undefined,
  };
}
