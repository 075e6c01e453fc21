import { afterEach, describe, expect, it } from "vitest";
import { VendorDSynthesizer } from "../src/tts/vendor-d.js";
import type { SynthesisRequest } from "../src/types.js";
import { collect, concat } from "./servers/collect.js";
import { knownPcm } from "./servers/tts-peer.js";
import { type VendorDPeerOptions, VendorDTtsServer } from "./servers/vendor-d-tts-server.js";

const KEY = "key-d";
const AUDIO = knownPcm(30_000, 7);
let server: VendorDTtsServer | undefined;

async function peer(options: Partial<VendorDPeerOptions> = {}) {
  server = await new VendorDTtsServer({ apiKey: KEY, audio: AUDIO, chunkBytes: 3_333, ...options }).start();
  return server;
}

function client(s: VendorDTtsServer, apiKey = KEY) {
  return new VendorDSynthesizer({ baseUrl: s.baseUrl, apiKey });
}

const request = (overrides: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
  text: "First sentence here. Second one!",
  voiceId: "voice-d",
  settings: { provider: "vendorD" },
  language: "en",
  ...overrides,
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("vendorD TTS WebSocket client", () => {
  it("authenticates with the query parameters and sends the text as continuations of one context", async () => {
    const s = await peer();
    const { error } = await collect(
      client(s).synthesize(request({ settings: { model: "sonic-3.5", speed: 1.3 } })),
    );
    expect(error).toBeUndefined();
    const [connection] = s.connections;
    expect(connection?.url.pathname).toBe("/tts/websocket");
    expect(connection?.url.searchParams.get("api_key")).toBe(KEY);
    expect(connection?.url.searchParams.get("vendorD_version")).toBe("2026-03-01");
    const messages = connection?.messages as Array<Record<string, unknown>>;
    const contextId = messages[0]?.context_id;
    expect(typeof contextId).toBe("string");
    const common = {
      model_id: "sonic-3.5",
      voice: { mode: "id", id: "voice-d" },
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24_000 },
      context_id: contextId,
      language: "en",
      generation_config: { speed: 1.3 },
    };
    expect(messages).toEqual([
      { ...common, transcript: "First sentence here. ", continue: true },
      { ...common, transcript: "Second one!", continue: false },
    ]);
    expect(s.violations).toEqual([]);
  });

  it("uses the default model, and the older models' speed control", async () => {
    const s = await peer();
    await collect(client(s).synthesize(request({ text: "One.", settings: {} })));
    await collect(
      client(s).synthesize(request({ text: "One.", settings: { model: "sonic-2", speed: 0.8 } })),
    );
    await collect(
      client(s).synthesize(request({ text: "One.", settings: { model: "sonic-turbo", speed: 1 } })),
    );
    const [first, second, third] = s.connections.map((c) => c.messages[0] as Record<string, unknown>);
    expect(first).toMatchObject({ model_id: "sonic-3.6", generation_config: { speed: 1 } });
    expect(second).not.toHaveProperty("generation_config");
    expect(second?.voice).toEqual({ mode: "id", id: "voice-d", __experimental_controls: { speed: -0.4 } });
    expect(third?.voice).toEqual({ mode: "id", id: "voice-d" });
    expect(s.violations).toEqual([]);
  });

  it("lets the operator name the version parameter and pick the version", async () => {
    const s = await peer({ versionParam: "api_version" });
    const synthesizer = new VendorDSynthesizer({
      baseUrl: s.baseUrl,
      apiKey: KEY,
      versionParam: "api_version",
      apiVersion: "2025-04-16",
    });
    const { error } = await collect(synthesizer.synthesize(request()));
    expect(error).toBeUndefined();
    expect(s.connections[0]?.url.searchParams.get("api_version")).toBe("2025-04-16");
  });

  it("yields its own context's PCM byte for byte, skipping timestamps and other contexts", async () => {
    const s = await peer();
    const { chunks, error } = await collect(client(s).synthesize(request()));
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length % 2).toBe(0);
    expect(concat(chunks)).toEqual(AUDIO);
  });

  it("yields audio as it arrives", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    const iterator = client(s).synthesize(request())[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual(AUDIO.subarray(0, 3_332));
    s.release();
    const rest: Uint8Array[] = [];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(r.value);
    expect(concat([first.value as Uint8Array, ...rest])).toEqual(AUDIO);
  });

  it("closes the socket when the signal aborts mid-stream", async () => {
    const s = await peer({ pauseAfterChunks: 1 });
    const controller = new AbortController();
    const iterator = client(s).synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    expect((await iterator.next()).done).toBe(true);
    expect(await s.connections[0]?.closed).toBe(1000);
  });

  it("closes the socket once the context is done (the vendor leaves it open)", async () => {
    const s = await peer();
    await collect(client(s).synthesize(request()));
    expect(await s.connections[0]?.closed).toBe(1000);
  });

  it("refuses an unknown model without connecting", async () => {
    const s = await peer();
    const { error } = await collect(client(s).synthesize(request({ settings: { model: "sonic-9" } })));
    expect(error?.kind).toBe("bad_request");
    expect(s.connections).toHaveLength(0);
  });
});

describe("vendorD errors", () => {
  const errorFrame = (status: number, code: string, message: string) =>
    JSON.stringify({
      type: "error",
      done: true,
      status_code: status,
      error_code: code,
      title: "Error",
      message,
      request_id: "r",
    });
  const cases: Array<[string, Partial<VendorDPeerOptions>, string, RegExp, string?]> = [
    ["a bad key (HTTP 401)", {}, "unauthorized", /HTTP 401.*Invalid API key/, "wrong"],
    [
      "HTTP 429 at the upgrade",
      { failure: { type: "refuse", status: 429, body: '{"error_code":"concurrency_limited"}' } },
      "rate_limited",
      /429/,
    ],
    [
      "a concurrency error frame (status 429)",
      {
        failure: {
          type: "frame",
          afterChunks: 1,
          frame: errorFrame(429, "concurrency_limited", "You have exceeded your plan's concurrency limit."),
        },
      },
      "rate_limited",
      /concurrency_limited/,
    ],
    [
      "an out-of-credits error frame",
      {
        failure: {
          type: "frame",
          afterChunks: 1,
          frame: errorFrame(402, "insufficient_credits", "Insufficient credits"),
        },
      },
      "rate_limited",
      /credits/,
    ],
    [
      "an invalid request error frame",
      {
        failure: {
          type: "frame",
          afterChunks: 0,
          frame: errorFrame(400, "model_not_found", "The model is not valid"),
        },
      },
      "bad_request",
      /model_not_found/,
    ],
    [
      "a frame without a type",
      { failure: { type: "frame", afterChunks: 1, frame: '{"data":"AAAA"}' } },
      "unavailable",
      /malformed.*no type/,
    ],
    [
      "chunk data that is not base64",
      { failure: { type: "frame", afterChunks: 1, frame: '{"type":"chunk","data":"!!!!","done":false}' } },
      "unavailable",
      /malformed.*base64/,
    ],
    ["an abrupt disconnect", { failure: { type: "abrupt", afterChunks: 1 } }, "unavailable", /abruptly/],
    [
      "a close before done",
      { failure: { type: "close", afterChunks: 1, code: 1011, reason: "internal error" } },
      "unavailable",
      /1011/,
    ],
  ];

  it.each(cases)("maps %s", async (_name, options, kind, message, apiKey) => {
    const s = await peer(options);
    const { chunks, error } = await collect(client(s, apiKey).synthesize(request()));
    expect(error?.provider).toBe("vendorD");
    expect(error?.kind).toBe(kind);
    expect(error?.message).toMatch(message);
    const failure = options.failure;
    if (failure && failure.type !== "refuse")
      expect(concat(chunks)).toEqual(AUDIO.subarray(0, failure.afterChunks * 3_332));
  });
});
