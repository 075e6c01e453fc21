import { i420Size, videoSize } from "@avatar/media";
import { freePort } from "@avatar/runtime";
import { collectingLogger } from "@avatar/testkit";
import { AudioSource, VideoSource } from "@livekit/rtc-node";
import { afterAll, describe, expect, it } from "vitest";
import { syntheticFrames } from "../../media/src/bench/synthetic-frames.js";
import {
  maxVideoBitrate,
  type PublisherState,
  retainTransportA,
  TransportAPublisher,
} from "../src/publisher/index.js";
import { audioFrameOf, videoFrameOf } from "../src/publisher/rtc-frames.js";
import { RoomServiceTestServer } from "./servers/room-service-server.js";

const release = retainTransportA();
afterAll(async () => {
  await release();
});

describe("frames in transportA's native shapes", () => {
  it("the SDK's video and audio sources take the stream's frames at every quality", async () => {
    for (const quality of ["low", "medium", "high", "very_high"] as const) {
      const { width, height } = videoSize(quality, "vertical");
      const { value: frame } = await syntheticFrames({ width, height, count: 1 }).next();
      if (!frame) throw new Error("no frame");
      const video = new VideoSource(width, height);
      const audio = new AudioSource(48_000, 1, 100);
      video.captureFrame(videoFrameOf(frame));
      await audio.captureFrame(audioFrameOf(frame));
      expect(audioFrameOf(frame)).toMatchObject({ sampleRate: 48_000, channels: 1, samplesPerChannel: 1920 });
      await video.close();
      await audio.close();
    }
  });

  it("a video frame whose bytes do not match its size is refused before it reaches the SDK", () => {
    const frame = {
      index: 0,
      at: 0,
      video: { width: 640, height: 360, data: new Uint8Array(i420Size(640, 360) - 1) },
      audio: new Int16Array(1920),
      mouthOpen: 0,
      speaking: false,
    };
    expect(() => videoFrameOf(frame)).toThrow(/I420 frame of 640x360 needs 345600 bytes, got 345599/);
  });

  it("caps the video bitrate by frame size", () => {
    expect(maxVideoBitrate(1280, 720)).toBe(1_728_000);
    expect(maxVideoBitrate(1920, 1080)).toBe(3_888_000);
    expect(maxVideoBitrate(640, 360)).toBe(432_000);
  });
});

describe("the SDK's native runtime", () => {
  it("is disposed by its last holder and starts again for the next one", async () => {
    const port = await freePort();
    const attempt = () =>
      new TransportAPublisher({
        url: `ws://127.0.0.1:${port}`,
        token: "a.b.c",
        frames: syntheticFrames({ width: 64, height: 64, count: 10, realtime: true }),
        codec: "H264",
        log: collectingLogger().log,
        joinAttempts: 1,
      }).run();
    const first = retainTransportA();
    const second = retainTransportA();
    expect((await attempt()).failure).toMatch(/Connection refused/);
    await first();
    await first(); // releasing twice counts once
    expect((await attempt()).failure).toMatch(/Connection refused/); // still held by `second` (and this file)
    await second();
    await release(); // the last holder: the runtime is disposed
    const again = retainTransportA();
    expect((await attempt()).failure).toMatch(/Connection refused/); // a fresh runtime answers
    await again();
  });
});

describe("a publisher that cannot join", () => {
  /** An endless stream that stops once the publisher has given up, counting what it yielded. */
  function untilGivenUp() {
    const stop = new AbortController();
    const counted = { yielded: 0 };
    async function* frames() {
      for await (const frame of syntheticFrames({
        width: 640,
        height: 360,
        signal: stop.signal,
        realtime: true,
      })) {
        counted.yielded++;
        yield frame;
      }
    }
    const states: PublisherState[] = [];
    const onState = (state: PublisherState) => {
      states.push(state);
      if (state.state === "failed") stop.abort();
    };
    return { frames: frames(), onState, states, counted };
  }

  it("retries, then gives up and drains the frames without holding them (unreachable server)", async () => {
    const { log, records } = collectingLogger();
    const port = await freePort();
    const run = untilGivenUp();
    const publisher = new TransportAPublisher({
      url: `ws://127.0.0.1:${port}`,
      token: "a.b.c",
      frames: run.frames,
      codec: "H264",
      log,
      joinAttempts: 2,
      retryDelayMs: 20,
      onState: run.onState,
    });
    const report = await publisher.run();
    expect(report.published).toBe(0);
    expect(report.dropped).toBe(run.counted.yielded);
    expect(report.failure).toMatch(/Connection refused/);
    expect(run.states.map((s) => s.state)).toEqual(["joining", "joining", "failed"]);
    expect(records().filter((l) => l.msg === "could not join the transportA room")).toHaveLength(2);
    publisher.clearAudio(); // not in a room: nothing to clear, no error
  });

  it("a server that is not a transportA signalling server fails the join the same way", async () => {
    const server = await RoomServiceTestServer.start("k", "s");
    try {
      const run = untilGivenUp();
      const report = await new TransportAPublisher({
        url: server.url.replace("http:", "ws:"),
        token: "a.b.c",
        frames: run.frames,
        codec: "VP8",
        log: collectingLogger().log,
        joinAttempts: 1,
        onState: run.onState,
      }).run();
      expect(report).toMatchObject({ published: 0, dropped: run.counted.yielded });
      expect(report.failure).toMatch(/404/);
      expect(run.states.map((s) => s.state)).toEqual(["joining", "failed"]);
    } finally {
      await server.close();
    }
  });

  it("ends with its frames, without sitting out the pause before the next attempt", async () => {
    const port = await freePort();
    const report = await new TransportAPublisher({
      url: `ws://127.0.0.1:${port}`,
      token: "a.b.c",
      frames: syntheticFrames({ width: 640, height: 360, count: 10, realtime: true }),
      codec: "H264",
      log: collectingLogger().log,
      retryDelayMs: 60_000,
    }).run();
    expect(report).toMatchObject({ published: 0, dropped: 10 });
  }, 10_000);

  it("stops when its signal aborts, even with an endless stream and joins still failing", async () => {
    const port = await freePort();
    const stop = new AbortController();
    const run = new TransportAPublisher({
      url: `ws://127.0.0.1:${port}`,
      token: "a.b.c",
      frames: syntheticFrames({ width: 640, height: 360, signal: stop.signal, realtime: true }),
      codec: "H264",
      log: collectingLogger().log,
      retryDelayMs: 10_000,
      signal: stop.signal,
    }).run();
    setTimeout(() => stop.abort(), 300);
    const report = await run;
    expect(report.published).toBe(0);
    expect(report.dropped).toBeGreaterThan(0);
  });
});
