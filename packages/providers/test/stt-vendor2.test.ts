import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { PcmResampler } from "../src/audio/stream-resampler.js";
import { type SttVendor2Options, SttVendor2Recognizer, SttVendor2Stream } from "../src/stt/stt-vendor2.js";
import { ProviderError, type RecognitionEvent, type RecognitionStream } from "../src/types.js";
import { zeroCrossingRate } from "./servers/audio-checks.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { chunks, concat, tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import { type SttVendor2Peer, startSttVendor2Server, turn } from "./servers/stt-vendor2-server.js";

const KEY = "stt2-key-456";
let server: WsTestServer<SttVendor2Peer>;
let open: RecognitionStream[];

beforeEach(async () => {
  server = await startSttVendor2Server(KEY);
  open = [];
});
afterEach(async () => {
  for (const stream of open) stream.close();
  await server.close();
});

function recognizer(options: Partial<SttVendor2Options> = {}): SttVendor2Recognizer {
  return new SttVendor2Recognizer({ baseUrl: new URL(server.url).origin, apiKey: KEY, ...options });
}

async function openStream(options: Partial<SttVendor2Options> = {}, language = "en-US") {
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

describe("SttVendor2Recognizer", () => {
  it("connects with the raw key and the query of the protocol, choosing the model by language", async () => {
    await openStream({}, "en-GB");
    await openStream({}, "de-DE");
    await openStream({ speechModel: "custom-model" }, "en");
    const queries = server.handshakes.map((h) =>
      Object.fromEntries(new URL(h.url ?? "", "http://x").searchParams),
    );
    expect(server.handshakes[0]?.headers.authorization).toBe(KEY);
    expect(new URL(server.handshakes[0]?.url ?? "", "http://x").pathname).toBe("/v3/ws");
    expect(queries).toEqual([
      {
        sample_rate: "16000",
        encoding: "pcm_s16le",
        format_turns: "true",
        speech_model: "universal-streaming-english",
      },
      {
        sample_rate: "16000",
        encoding: "pcm_s16le",
        format_turns: "true",
        speech_model: "universal-streaming-multilingual",
      },
      { sample_rate: "16000", encoding: "pcm_s16le", format_turns: "true", speech_model: "custom-model" },
    ]);
  });

  it("does not hand out the stream before Begin", async () => {
    const error = await rejection(
      recognizer({ speechModel: "silent-model", connectTimeoutMs: 300 }).open({ language: "en" }),
    );
    expect(error.message).toContain("did not start");
  });

  it("resamples to 16 kHz and regroups the audio into frames of 50 to 1000 ms", async () => {
    const { stream, peer, reader } = await openStream();
    const audio = concat([tone(24_000, 1000, 1000), tone(24_000, 1500, 1000)]);
    const pieces = [...chunks(audio.subarray(0, 48_000), 24_000, 20), audio.subarray(48_000)];
    for (const piece of pieces) stream.write(piece);
    stream.end();
    expect(await reader.rest()).toEqual([]);
    expect(peer.violations).toEqual([]);

    const reference = new PcmResampler(24_000, 16_000);
    const expected = concat(pieces.map((piece) => reference.process(piece)));
    const sent = peer.audio;
    for (const frame of peer.binaryFrames) {
      expect(frame.length).toBeGreaterThanOrEqual(1600);
      expect(frame.length).toBeLessThanOrEqual(32_000);
    }
    expect(sent.subarray(0, expected.length)).toEqual(expected);
    // Only the tail is padded, with silence, up to one minimum frame.
    expect(sent.length - expected.length).toBeLessThan(1600);
    expect(sent.subarray(expected.length).every((b) => b === 0)).toBe(true);
    expect(expected.length / 2).toBeGreaterThan(2.5 * 16_000 - 10);
    expect(Math.abs(zeroCrossingRate(expected, 16_000) - 2000)).toBeLessThan(40);
    expect(peer.messages).toEqual([{ type: "Terminate" }]);
  });

  it("running transcripts are partials; the formatted end of a turn is the final", async () => {
    const { peer, reader } = await openStream();
    peer.sendTurn(0, "");
    peer.sendTurn(0, "hi");
    peer.sendTurn(0, "hi my name");
    peer.sendTurn(0, "hi my name is sonny", true, false);
    peer.sendTurn(0, "Hi, my name is Sonny.", true, true);
    peer.sendTurn(1, "i am");
    peer.sendTurn(1, "i am a voice agent", true, false);
    // The formatted version of turn 1 never comes: turn 2 starts.
    peer.sendTurn(2, "bye");
    expect(await reader.until("partial", (e) => e.type === "partial" && e.text === "bye")).toEqual([
      { type: "partial", text: "hi" },
      { type: "partial", text: "hi my name" },
      { type: "final", text: "Hi, my name is Sonny." },
      { type: "end_of_turn" },
      { type: "partial", text: "i am" },
      { type: "final", text: "i am a voice agent" },
      { type: "end_of_turn" },
      { type: "partial", text: "bye" },
    ]);
  });

  it("end() delivers the turns in flight and ends with Termination", async () => {
    const { stream, peer, reader } = await openStream();
    peer.flushOnTerminate.push(
      turn(3, "last one", true, false),
      turn(3, "Last one.", true, true),
      turn(4, "tail", true),
    );
    stream.write(tone(24_000, 200));
    stream.end();
    expect(await reader.rest()).toEqual([
      { type: "final", text: "Last one." },
      { type: "end_of_turn" },
      { type: "final", text: "tail" },
      { type: "end_of_turn" },
    ]);
    expect(peer.messages).toEqual([{ type: "Terminate" }]);
    expect(peer.violations).toEqual([]);
  });

  it("close() ends the events at once and closes normally", async () => {
    const { stream, peer, reader } = await openStream();
    stream.close();
    expect(await reader.rest()).toEqual([]);
    expect((await peer.closed).code).toBe(1000);
  });

  describe("failures", () => {
    it("a bad key (Error 1008 after the upgrade) rejects open as unauthorized", async () => {
      const error = await rejection(
        new SttVendor2Recognizer({ baseUrl: new URL(server.url).origin, apiKey: "nope" }).open({
          language: "en",
        }),
      );
      expect(error.kind).toBe("unauthorized");
      expect(error.message).toContain("Invalid API key");
    });

    it("too many concurrent sessions is rate_limited", async () => {
      const error = await rejection(recognizer({ speechModel: "busy-model" }).open({ language: "en" }));
      expect(error.kind).toBe("rate_limited");
      expect(error.message).toContain("3009");
    });

    it("HTTP 429 and 401 at the upgrade", async () => {
      server.refuseNext({ status: 429, body: { error: "Too many requests" } });
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("rate_limited");
      server.refuseNext({ status: 401, body: { error: "Invalid API key" } });
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("unauthorized");
    });

    it("an account problem mid-session is rate_limited; a server failure is unavailable", async () => {
      const first = await openStream();
      first.peer.fail(1008, "Unauthorized Connection: insufficient account balance");
      expect(shapes(await first.reader.rest())).toEqual([{ type: "error", kind: "rate_limited" }]);
      const second = await openStream();
      second.peer.fail(3005, "Session Cancelled: An error occurred");
      const events = await second.reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "unavailable" }]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("Session Cancelled");
    });

    it("an error that arrives in the same burst as Begin is not lost", async () => {
      // Frames read in one go are handled before `open` resumes: no socket can time that, so a stub does.
      const socket = {
        OPEN: 1,
        readyState: 1,
        send() {},
        close() {},
        terminate() {},
      } as unknown as WebSocket;
      const stream = new SttVendor2Stream(1000);
      const started = stream.start(socket, 1000);
      stream.onMessage(Buffer.from(JSON.stringify({ type: "Begin", id: "s", expires_at: 1 })));
      stream.onMessage(
        Buffer.from(JSON.stringify({ type: "Error", error_code: 3005, error: "Session Cancelled" })),
      );
      stream.onClose(3005, "Session Cancelled");
      await started;
      expect(shapes(await new EventReader(stream.events).rest())).toEqual([
        { type: "error", kind: "unavailable" },
      ]);
    });

    it("a close with a protocol code and no Error message is classified by its code", async () => {
      const { peer, reader } = await openStream();
      peer.closeWith(3007, "Audio Transmission Rate Exceeded");
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "bad_request" }]);
    });

    it("malformed messages are reported and the stream goes on", async () => {
      const { peer, reader } = await openStream();
      peer.sendRaw("[]");
      peer.sendTurn(0, "ok", true, true);
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
  });
});
