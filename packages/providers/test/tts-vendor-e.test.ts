import { afterEach, describe, expect, it } from "vitest";
import { encodeMsgpack } from "../src/encoding/msgpack.js";
import { VendorESynthesizer } from "../src/tts/vendor-e.js";
import type { SynthesisRequest } from "../src/types.js";
import { collect, concat } from "./servers/collect.js";
import { knownPcm, type PeerOptions } from "./servers/tts-peer.js";
import { VendorETtsServer } from "./servers/vendor-e-tts-server.js";

const KEY = "key-e";
const AUDIO = knownPcm(20_000, 99);
let server: VendorETtsServer | undefined;

async function peer(options: Partial<PeerOptions> = {}) {
  server = await new VendorETtsServer({ apiKey: KEY, audio: AUDIO, chunkBytes: 2_501, ...options }).start();
  return server;
}

function client(s: VendorETtsServer, apiKey = KEY) {
  return new VendorESynthesizer({ baseUrl: s.baseUrl, apiKey });
}

const request = (overrides: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
  text: "Hi. Nice to meet you?",
  voiceId: "ref-123",
  settings: { provider: "vendorE" },
  ...overrides,
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("vendorE live client", () => {
  it("sends the key and model headers and the exact MessagePack events", async () => {
    const s = await peer();
    const settings = { provider: "vendorE", model: "s2-pro", latency_mode: "low", speed: 1.2 };
    const { error } = await collect(client(s).synthesize(request({ settings })));
    expect(error).toBeUndefined();
    const [connection] = s.connections;
    expect(connection?.url.pathname).toBe("/v1/tts/live");
    expect(connection?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(connection?.headers.model).toBe("s2-pro");
    expect(connection?.messages).toEqual([
      {
        event: "start",
        request: {
          text: "",
          format: "pcm",
          sample_rate: 24_000,
          reference_id: "ref-123",
          latency: "low",
          prosody: { speed: 1.2 },
        },
      },
      { event: "text", text: "Hi. " },
      { event: "text", text: "Nice to meet you? " },
      { event: "flush" },
      { event: "stop" },
    ]);
    expect(s.violations).toEqual([]);
  });

  it("uses the variant's defaults: model s2.1-pro, balanced latency, speed 1", async () => {
    const s = await peer();
    await collect(client(s).synthesize(request()));
    expect(s.connections[0]?.headers.model).toBe("s2.1-pro");
    expect(s.connections[0]?.messages[0]).toMatchObject({
      request: { latency: "balanced", prosody: { speed: 1 } },
    });
  });

  it("yields the binary audio byte for byte in whole samples, passing over unknown events", async () => {
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
    expect(first.value).toEqual(AUDIO.subarray(0, 2_500));
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

  it("does not connect when aborted before starting, nor for an unknown latency mode", async () => {
    const s = await peer();
    const controller = new AbortController();
    controller.abort();
    expect((await collect(client(s).synthesize(request(), controller.signal))).chunks).toEqual([]);
    const { error } = await collect(client(s).synthesize(request({ settings: { latency_mode: "instant" } })));
    expect(error?.kind).toBe("bad_request");
    expect(s.connections).toHaveLength(0);
  });
});

describe("vendorE errors", () => {
  const frame = (afterChunks: number, value: unknown) => ({
    type: "frame" as const,
    afterChunks,
    frame: encodeMsgpack(value),
  });
  const cases: Array<[string, Partial<PeerOptions>, string, RegExp, string?]> = [
    ["a bad key (HTTP 401)", {}, "unauthorized", /HTTP 401.*Invalid API key/, "wrong"],
    ["HTTP 429 at the upgrade", { failure: { type: "refuse", status: 429 } }, "rate_limited", /429/],
    [
      "a concurrency error event",
      { failure: frame(1, { event: "error", error: "Concurrency limit exceeded", max_concurrency: 8 }) },
      "rate_limited",
      /Concurrency limit/,
    ],
    [
      "finish with reason error",
      { failure: frame(1, { event: "finish", reason: "error" }) },
      "unavailable",
      /finished with error/,
    ],
    [
      "a text frame",
      { failure: { type: "frame", afterChunks: 1, frame: '{"event":"audio"}' } },
      "unavailable",
      /malformed.*text frame/,
    ],
    [
      "bytes that are not MessagePack",
      { failure: { type: "frame", afterChunks: 1, frame: new Uint8Array([0xc1]) } },
      "unavailable",
      /malformed/,
    ],
    [
      "audio that is not binary",
      { failure: frame(1, { event: "audio", audio: "AAAA" }) },
      "unavailable",
      /malformed.*not binary/,
    ],
    [
      "a close with 1008 naming the quota",
      { failure: { type: "close", afterChunks: 1, code: 1008, reason: "quota exceeded" } },
      "rate_limited",
      /1008/,
    ],
    ["an abrupt disconnect", { failure: { type: "abrupt", afterChunks: 1 } }, "unavailable", /abruptly/],
  ];

  it.each(cases)("maps %s", async (_name, options, kind, message, apiKey) => {
    const s = await peer(options);
    const { chunks, error } = await collect(client(s, apiKey).synthesize(request()));
    expect(error?.provider).toBe("vendorE");
    expect(error?.kind).toBe(kind);
    expect(error?.message).toMatch(message);
    if (options.failure && options.failure.type !== "refuse")
      expect(concat(chunks)).toEqual(AUDIO.subarray(0, 2_500));
  });
});
