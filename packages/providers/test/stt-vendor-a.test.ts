import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PcmResampler } from "../src/audio/stream-resampler.js";
import { VendorARecognizer, type VendorASttOptions } from "../src/stt/vendor-a-stt.js";
import { ProviderError, type RecognitionEvent, type RecognitionStream } from "../src/types.js";
import { zeroCrossingRate } from "./servers/audio-checks.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { chunks, tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import {
  startVendorASttServer,
  type VendorASttBehaviour,
  type VendorASttPeer,
} from "./servers/vendor-a-stt-server.js";

const KEY = "xi-stt-key";
const MODEL = "realtime-model-x";
let server: WsTestServer<VendorASttPeer>;
let behaviour: VendorASttBehaviour;
let open: RecognitionStream[];

beforeEach(async () => {
  behaviour = {};
  server = await startVendorASttServer(KEY, behaviour);
  open = [];
});
afterEach(async () => {
  for (const stream of open) stream.close();
  await server.close();
});

function recognizer(options: Partial<VendorASttOptions> = {}): VendorARecognizer {
  return new VendorARecognizer({
    baseUrl: new URL(server.url).origin,
    apiKey: KEY,
    modelId: MODEL,
    ...options,
  });
}

async function openStream(options: Partial<VendorASttOptions> = {}, language = "en-US") {
  const peerReady = server.nextPeer();
  const stream = await recognizer(options).open({ language });
  open.push(stream);
  return { stream, peer: await peerReady, reader: new EventReader<RecognitionEvent>(stream.events) };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const committed = (text: string) => ({ message_type: "committed_transcript", text });
const partial = (text: string) => ({ message_type: "partial_transcript", text });

describe("VendorARecognizer", () => {
  it("connects with the key header and the model, format, language and commit strategy", async () => {
    await openStream({}, "de-DE");
    await openStream({ commitStrategy: "manual" }, "ja");
    expect(server.handshakes[0]?.headers["xi-api-key"]).toBe(KEY);
    const queries = server.handshakes.map((h) => new URL(h.url ?? "", "http://x"));
    expect(queries[0]?.pathname).toBe("/v1/speech-to-text/realtime");
    expect(queries.map((url) => Object.fromEntries(url.searchParams))).toEqual([
      { model_id: MODEL, audio_format: "pcm_16000", language_code: "de", commit_strategy: "vad" },
      { model_id: MODEL, audio_format: "pcm_16000", language_code: "ja", commit_strategy: "manual" },
    ]);
  });

  it("sends each write as an uncommitted base64 chunk of 16 kHz audio", async () => {
    const { stream, peer } = await openStream();
    const pieces = chunks(tone(24_000, 500, 1000), 24_000, 50);
    for (const piece of pieces) stream.write(piece);
    await peer.received.waitFor(() => peer.received.items.length === pieces.length);
    const reference = new PcmResampler(24_000, 16_000);
    expect(peer.audioChunks).toEqual(pieces.map((piece) => reference.process(piece)));
    expect(peer.messages.every((m) => m.commit === false && m.sample_rate === 16_000)).toBe(true);
    expect(Math.abs(zeroCrossingRate(peer.audio, 16_000) - 2000)).toBeLessThan(40);
    expect(peer.violations).toEqual([]);
  });

  it("partials are partials; the server's commits are finals that end the turn", async () => {
    const { peer, reader } = await openStream();
    peer.send(partial(""));
    peer.send(partial("Hello"));
    peer.send(partial("Hello, how are"));
    peer.send(committed("Hello, how are you?"));
    peer.send({
      message_type: "committed_transcript_with_timestamps",
      text: "Hello, how are you?",
      words: [],
    });
    peer.send({ message_type: "commit_throttled", error: "Commit request ignored" });
    peer.send(partial("Fine"));
    expect(await reader.until("partial", (e) => e.type === "partial" && e.text === "Fine")).toEqual([
      { type: "partial", text: "Hello" },
      { type: "partial", text: "Hello, how are" },
      { type: "final", text: "Hello, how are you?" },
      { type: "end_of_turn" },
      { type: "partial", text: "Fine" },
    ]);
  });

  it("with manual commits a commit is a final without an end of turn", async () => {
    const { peer, reader } = await openStream({ commitStrategy: "manual" });
    peer.send(committed("One."));
    peer.send(partial("Two"));
    expect(await reader.until("partial")).toEqual([
      { type: "final", text: "One." },
      { type: "partial", text: "Two" },
    ]);
  });

  it("end() commits the rest and finishes with its transcript", async () => {
    const { stream, peer, reader } = await openStream();
    peer.commitReplies.push(committed("the last words"));
    stream.write(tone(24_000, 100));
    peer.send(partial("the last"));
    await reader.until("partial");
    stream.end();
    expect(await reader.rest()).toEqual([{ type: "final", text: "the last words" }, { type: "end_of_turn" }]);
    expect(peer.messages.at(-1)).toEqual({
      message_type: "input_audio_chunk",
      audio_base_64: "",
      commit: true,
      sample_rate: 16_000,
    });
    expect((await peer.closed).code).toBe(1000);
  });

  it("end() with nothing uncommitted finishes at once", async () => {
    const { stream, peer, reader } = await openStream();
    stream.end();
    expect(await reader.rest()).toEqual([]);
    expect((await peer.closed).code).toBe(1000);
    expect(peer.messages.at(-1)).toMatchObject({ commit: true });
  });

  it("a commit the server declines at the end keeps the last partial as the final", async () => {
    const { stream, peer, reader } = await openStream({ commitStrategy: "manual" });
    peer.commitReplies.push({ message_type: "insufficient_audio_activity", error: "Not enough audio" });
    peer.send(partial("maybe"));
    await reader.until("partial");
    stream.end();
    expect(await reader.rest()).toEqual([{ type: "final", text: "maybe" }]);
  });

  describe("failures", () => {
    it("a bad key is refused at the upgrade: unauthorized", async () => {
      const error = await rejection(
        new VendorARecognizer({ baseUrl: new URL(server.url).origin, apiKey: "bad", modelId: MODEL }).open({
          language: "en",
        }),
      );
      expect(error.kind).toBe("unauthorized");
      expect(error.message).toContain("HTTP 401");
    });

    it("errors instead of session_started reject open, by type", async () => {
      behaviour.startError = { message_type: "quota_exceeded", error: "Quota exceeded for this key" };
      const quota = await rejection(recognizer().open({ language: "en" }));
      expect(quota.kind).toBe("rate_limited");
      expect(quota.message).toBe("quota_exceeded: Quota exceeded for this key");
      behaviour.startError = { message_type: "auth_error", error: "Invalid token" };
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("unauthorized");
      behaviour.startError = { message_type: "unaccepted_terms", error: "Accept the terms" };
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("unauthorized");
    });

    it("HTTP 429 at the upgrade is rate_limited", async () => {
      server.refuseNext({ status: 429, body: { detail: { status: "too_many_concurrent_requests" } } });
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("rate_limited");
    });

    it("error messages mid-stream end it, classified by their type", async () => {
      const cases: [string, string][] = [
        ["rate_limited", "rate_limited"],
        ["resource_exhausted", "rate_limited"],
        ["queue_overflow", "rate_limited"],
        ["chunk_size_exceeded", "bad_request"],
        ["input_error", "bad_request"],
        ["transcriber_error", "unavailable"],
        ["session_time_limit_exceeded", "unavailable"],
        ["some_future_error", "unavailable"],
        ["another_future_error", "rate_limited"],
      ];
      for (const [type, kind] of cases) {
        const { peer, reader } = await openStream();
        peer.fail(type, type === "another_future_error" ? "concurrency limit reached" : "it failed");
        const events = await reader.rest();
        expect(shapes(events), type).toEqual([{ type: "error", kind }]);
      }
    });

    it("malformed messages are reported and the stream goes on", async () => {
      const { peer, reader } = await openStream();
      peer.sendRaw("<html>");
      peer.send(committed("ok"));
      expect(shapes(await reader.until("final"))).toEqual([
        { type: "error", kind: "unavailable" },
        { type: "final", text: "ok" },
      ]);
    });

    it("an abrupt drop is unavailable", async () => {
      const { peer, reader } = await openStream();
      peer.drop();
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("no transcript for the final commit times out", async () => {
      const { stream, peer, reader } = await openStream({ finishTimeoutMs: 200 });
      peer.send(partial("waiting"));
      await reader.until("partial");
      stream.end();
      const events = await reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "unavailable" }]);
    });
  });
});
