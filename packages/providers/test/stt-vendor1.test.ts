import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SttVendor1Options, SttVendor1Recognizer } from "../src/stt/stt-vendor1.js";
import { ProviderError, type RecognitionEvent, type RecognitionStream } from "../src/types.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import type { ClientFrame } from "./servers/stt-peer.js";
import { results, type SttVendor1Peer, startSttVendor1Server } from "./servers/stt-vendor1-server.js";

const KEY = "stt1-key-123";
let server: WsTestServer<SttVendor1Peer>;
let open: RecognitionStream[];

beforeEach(async () => {
  server = await startSttVendor1Server(KEY);
  open = [];
});
afterEach(async () => {
  for (const stream of open) stream.close();
  await server.close();
});

function recognizer(options: Partial<SttVendor1Options> = {}): SttVendor1Recognizer {
  return new SttVendor1Recognizer({ baseUrl: new URL(server.url).origin, apiKey: KEY, ...options });
}

async function openStream(options: Partial<SttVendor1Options> = {}, language = "en-US") {
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

describe("SttVendor1Recognizer", () => {
  it("connects with the token header and exactly the query the protocol needs", async () => {
    await openStream(
      { model: "general-x", utteranceEndMs: 1000, baseUrl: `http://${new URL(server.url).host}` },
      "de",
    );
    const handshake = server.handshakes[0];
    expect(handshake?.headers.authorization).toBe(`Token ${KEY}`);
    const url = new URL(handshake?.url ?? "", "http://x");
    expect(url.pathname).toBe("/v1/listen");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      encoding: "linear16",
      sample_rate: "24000",
      channels: "1",
      interim_results: "true",
      punctuate: "true",
      language: "de",
      model: "general-x",
      utterance_end_ms: "1000",
    });
  });

  it("streams the 24 kHz audio unchanged in binary frames and never sends an empty one", async () => {
    const { stream, peer, reader } = await openStream();
    const audio = tone(24_000, 300, 440);
    const pieces = [
      audio.subarray(0, 4801),
      new Uint8Array(0),
      audio.subarray(4801, 9600),
      audio.subarray(9600),
    ];
    for (const piece of pieces) stream.write(piece);
    stream.end();
    expect(await reader.rest()).toEqual([]);
    expect(peer.audio).toEqual(audio);
    expect(peer.binaryFrames.map((frame) => frame.length)).toEqual([4801, 4799, audio.length - 9600]);
    expect(peer.messages).toEqual([{ type: "CloseStream" }]);
    expect(peer.violations).toEqual([]);
  });

  it("reports interim results as partials, finals as finals, and each end of turn once", async () => {
    const { peer, reader } = await openStream();
    peer.sendResults("hel");
    peer.sendResults("hello wor");
    peer.sendResults("hello world", { isFinal: true });
    peer.sendResults("", { isFinal: true, speechFinal: true });
    peer.send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: 2.1 });
    peer.send({ type: "SpeechStarted", channel: [0], timestamp: 3.2 });
    peer.sendResults("again", {});
    peer.sendResults("again, please.", { isFinal: true });
    peer.send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: 4.5 });
    peer.sendResults("   ", { isFinal: true, speechFinal: true });
    peer.sendResults("done", { isFinal: true, speechFinal: true });
    const events = await reader.until("final", (e) => e.type === "final" && e.text === "done");
    expect(await reader.until("end_of_turn")).toEqual([{ type: "end_of_turn" }]);
    expect(events).toEqual([
      { type: "partial", text: "hel" },
      { type: "partial", text: "hello wor" },
      { type: "final", text: "hello world" },
      { type: "end_of_turn" },
      { type: "partial", text: "again" },
      { type: "final", text: "again, please." },
      { type: "end_of_turn" },
      { type: "final", text: "done" },
    ]);
  });

  it("end() sends CloseStream and delivers what the server flushes before its normal close", async () => {
    const { stream, peer, reader } = await openStream();
    peer.flushOnClose.push(results("last words", { isFinal: true, speechFinal: true }));
    stream.write(tone(24_000, 100));
    stream.end();
    stream.write(tone(24_000, 100));
    expect(await reader.rest()).toEqual([{ type: "final", text: "last words" }, { type: "end_of_turn" }]);
    expect(peer.binaryFrames).toHaveLength(1);
    expect((await peer.closed).code).toBe(1000);
  });

  it("sends KeepAlive once no audio has gone out for the interval", async () => {
    const keepAliveMs = 150;
    const { stream, peer } = await openStream({ keepAliveMs });
    const wrote = Date.now();
    stream.write(tone(24_000, 20));
    const isKeepAlive = (f: ClientFrame) => f.kind === "json" && f.message.type === "KeepAlive";
    const first = await peer.received.waitFor(isKeepAlive);
    // Timers never fire early: the KeepAlive cannot come before a full interval after the audio.
    expect(Date.now() - wrote).toBeGreaterThanOrEqual(keepAliveMs - 5);
    expect(peer.received.items[0]?.kind).toBe("binary");
    // And they go on while the line stays quiet.
    await peer.received.waitFor(isKeepAlive, peer.received.items.indexOf(first) + 1);
    expect(peer.violations).toEqual([]);
  });

  it("close() ends the events at once and closes the socket normally", async () => {
    const { stream, peer, reader } = await openStream();
    stream.close();
    expect(await reader.rest()).toEqual([]);
    expect((await peer.closed).code).toBe(1000);
  });

  it("an aborted signal rejects open, and aborting later closes the stream", async () => {
    const aborted = new AbortController();
    aborted.abort(new Error("gone"));
    await expect(recognizer().open({ language: "en" }, aborted.signal)).rejects.toThrow("gone");

    const controller = new AbortController();
    const peerReady = server.nextPeer();
    const stream = await recognizer().open({ language: "en" }, controller.signal);
    const peer = await peerReady;
    controller.abort();
    expect(await new EventReader(stream.events).rest()).toEqual([]);
    expect((await peer.closed).code).toBe(1000);
  });

  describe("failures", () => {
    it("a bad key is unauthorized, with the vendor's message", async () => {
      const error = await rejection(
        new SttVendor1Recognizer({ baseUrl: new URL(server.url).origin, apiKey: "wrong" }).open({
          language: "en",
        }),
      );
      expect(error.kind).toBe("unauthorized");
      expect(error.message).toContain("HTTP 401");
      expect(error.message).toContain("Invalid credentials.");
    });

    it("HTTP 429 at the upgrade is rate_limited with its Retry-After", async () => {
      server.refuseNext({
        status: 429,
        headers: { "retry-after": "3" },
        body: { err_msg: "Too many requests" },
      });
      const error = await rejection(recognizer().open({ language: "en" }));
      expect(error.kind).toBe("rate_limited");
      expect(error.message).toContain("retry after 3 s");
    });

    it("other refusals are bad_request (4xx) or unavailable (5xx)", async () => {
      server.refuseNext({ status: 400, body: { err_msg: "unsupported language" } });
      expect((await rejection(recognizer().open({ language: "xx" }))).kind).toBe("bad_request");
      server.refuseNext({ status: 503 });
      expect((await rejection(recognizer().open({ language: "en" }))).kind).toBe("unavailable");
    });

    it("undecodable audio (1008 DATA-0000) is a bad request that ends the stream", async () => {
      const { peer, reader } = await openStream();
      peer.closeWith(1008, "DATA-0000");
      const events = await reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "bad_request" }]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("DATA-0000");
    });

    it("a server timeout (1011 NET-0001) is unavailable", async () => {
      const { peer, reader } = await openStream();
      peer.closeWith(1011, "NET-0001");
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("malformed messages are reported and the stream goes on", async () => {
      const { peer, reader } = await openStream();
      peer.sendRaw("{not json");
      peer.send({ type: "Results", is_final: true, channel: {} });
      peer.sendResults("still here", { isFinal: true });
      const events = await reader.until("final");
      expect(shapes(events)).toEqual([
        { type: "error", kind: "unavailable" },
        { type: "error", kind: "unavailable" },
        { type: "final", text: "still here" },
      ]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("malformed");
    });

    it("an abrupt drop is reported as unavailable and ends the events", async () => {
      const { peer, reader } = await openStream();
      peer.sendResults("half", {});
      await reader.until("partial");
      peer.drop();
      const events = await reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "unavailable" }]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("abruptly");
    });

    it("a normal close before the end of the audio is still an error", async () => {
      const { peer, reader } = await openStream();
      peer.closeWith(1000);
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("a server that never finishes after CloseStream times out", async () => {
      const { stream, peer, reader } = await openStream({ finishTimeoutMs: 200 });
      peer.answersCloseStream = false;
      stream.end();
      const events = await reader.rest();
      expect(shapes(events)).toEqual([{ type: "error", kind: "unavailable" }]);
      expect((events[0] as { error: ProviderError }).error.message).toContain("no end of the results");
      expect((await peer.closed).code).toBe(1000);
    });
  });
});
