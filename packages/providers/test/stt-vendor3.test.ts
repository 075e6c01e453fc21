import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PcmResampler } from "../src/audio/stream-resampler.js";
import { type SttVendor3Options, SttVendor3Recognizer } from "../src/stt/stt-vendor3.js";
import { ProviderError, type RecognitionEvent, type RecognitionStream } from "../src/types.js";
import { zeroCrossingRate } from "./servers/audio-checks.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { chunks, concat, tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import {
  type SttVendor3Behaviour,
  type SttVendor3Peer,
  startSttVendor3Server,
  transcript,
} from "./servers/stt-vendor3-server.js";

const KEY = "stt3-key-789";
let server: WsTestServer<SttVendor3Peer>;
let behaviour: SttVendor3Behaviour;
let open: RecognitionStream[];

beforeEach(async () => {
  behaviour = { overQuota: false, silent: false };
  server = await startSttVendor3Server(KEY, behaviour);
  open = [];
});
afterEach(async () => {
  for (const stream of open) stream.close();
  await server.close();
});

function recognizer(options: Partial<SttVendor3Options> = {}): SttVendor3Recognizer {
  return new SttVendor3Recognizer({ baseUrl: new URL(server.url).origin, apiKey: KEY, ...options });
}

async function openStream(options: Partial<SttVendor3Options> = {}, language = "en-US") {
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

describe("SttVendor3Recognizer", () => {
  it("authorizes with the bearer key and starts with exactly the StartRecognition of the protocol", async () => {
    const { peer } = await openStream();
    expect(server.handshakes[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.handshakes[0]?.url).toBe("/v2");
    expect(peer.messages).toEqual([
      {
        message: "StartRecognition",
        audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16_000 },
        transcription_config: { language: "en", enable_partials: true },
      },
    ]);
    const withEndpointing = await openStream({ endOfUtteranceSilenceSeconds: 0.6 }, "fr");
    expect(withEndpointing.peer.messages[0]).toMatchObject({
      transcription_config: { language: "fr", enable_partials: true },
      conversation_config: { end_of_utterance_silence_trigger: 0.6 },
    });
  });

  it("waits for RecognitionStarted before handing out the stream", async () => {
    behaviour.silent = true;
    const error = await rejection(recognizer({ connectTimeoutMs: 300 }).open({ language: "en" }));
    expect(error.message).toContain("did not start");
  });

  it("sends each write as one AddAudio frame of 16 kHz audio and numbers the last one in EndOfStream", async () => {
    const { stream, peer, reader } = await openStream();
    const pieces = chunks(tone(24_000, 600, 500), 24_000, 40);
    for (const piece of pieces) stream.write(piece);
    stream.end();
    expect(await reader.rest()).toEqual([]);
    const reference = new PcmResampler(24_000, 16_000);
    expect(peer.binaryFrames).toEqual(pieces.map((piece) => reference.process(piece)));
    expect(Math.abs(zeroCrossingRate(peer.audio, 16_000) - 1000)).toBeLessThan(20);
    expect(peer.messages.at(-1)).toEqual({ message: "EndOfStream", last_seq_no: pieces.length });
    expect(peer.violations).toEqual([]);
  });

  it("partial transcripts are partials, transcripts are finals, EndOfUtterance ends the turn", async () => {
    const { stream, peer, reader } = await openStream();
    stream.write(tone(24_000, 40));
    peer.sendTranscript("good", false);
    peer.sendTranscript("good morn", false);
    peer.send({ message: "Info", type: "recognition_quality", reason: "x" });
    peer.sendTranscript("Good morning.", true);
    peer.sendTranscript("", true);
    peer.send({ message: "Warning", type: "duration_limit_exceeded", reason: "x" });
    peer.send({ message: "EndOfUtterance", metadata: { start_time: 1.2, end_time: 1.2 } });
    peer.sendTranscript("How", false);
    expect(await reader.until("partial", (e) => e.type === "partial" && e.text === "How")).toEqual([
      { type: "partial", text: "good" },
      { type: "partial", text: "good morn" },
      { type: "final", text: "Good morning." },
      { type: "end_of_turn" },
      { type: "partial", text: "How" },
    ]);
  });

  it("end() delivers the last transcripts and finishes with EndOfTranscript", async () => {
    const { stream, peer, reader } = await openStream();
    peer.flushOnEnd.push(transcript("are you", false), transcript("How are you?", true));
    stream.write(concat([tone(24_000, 100)]));
    stream.end();
    expect(await reader.rest()).toEqual([
      { type: "partial", text: "are you" },
      { type: "final", text: "How are you?" },
    ]);
    expect(peer.violations).toEqual([]);
  });

  describe("failures", () => {
    it("a bad key is refused at the upgrade: unauthorized", async () => {
      const error = await rejection(
        new SttVendor3Recognizer({ baseUrl: new URL(server.url).origin, apiKey: "bad" }).open({
          language: "en",
        }),
      );
      expect(error.kind).toBe("unauthorized");
      expect(error.message).toContain("HTTP 401");
    });

    it("an account over its concurrency quota is rate_limited", async () => {
      behaviour.overQuota = true;
      const error = await rejection(recognizer().open({ language: "en" }));
      expect(error.kind).toBe("rate_limited");
      expect(error.message).toContain("quota_exceeded: Concurrent Quota Exceeded");
    });

    it("HTTP 429 at the upgrade is rate_limited", async () => {
      server.refuseNext({ status: 429, headers: { "retry-after": "10" } });
      const error = await rejection(recognizer().open({ language: "en" }));
      expect(error.kind).toBe("rate_limited");
      expect(error.message).toContain("retry after 10 s");
    });

    it("Error messages mid-stream end it, classified by their type", async () => {
      const cases: [string, string, number, string][] = [
        ["insufficient_funds", "No credit left", 4002, "rate_limited"],
        ["not_authorised", "Key revoked", 4001, "unauthorized"],
        ["invalid_audio_type", "Bad audio", 4003, "bad_request"],
        ["job_error", "Worker failed", 4013, "unavailable"],
      ];
      for (const [type, reason, code, kind] of cases) {
        const { peer, reader } = await openStream();
        peer.fail(type, reason, code);
        const events = await reader.rest();
        expect(shapes(events)).toEqual([{ type: "error", kind }]);
        expect((events[0] as { error: ProviderError }).error.message).toBe(`${type}: ${reason}`);
      }
    });

    it("a close without an Error message is classified by its code", async () => {
      const { peer, reader } = await openStream();
      peer.closeWith(4005, "");
      const events = await reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "rate_limited" }]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("quota_exceeded");
    });

    it("malformed messages are reported and the stream goes on", async () => {
      const { peer, reader } = await openStream();
      peer.sendRaw("not json at all");
      peer.sendTranscript("fine", true);
      expect(shapes(await reader.until("final"))).toEqual([
        { type: "error", kind: "unavailable" },
        { type: "final", text: "fine" },
      ]);
    });

    it("an abrupt drop is unavailable", async () => {
      const { peer, reader } = await openStream();
      peer.drop();
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });
  });
});
