/**
 * The whole path against a real transportA server, when one is given:
 *   TRANSPORT_A_TEST_URL=wss://... TRANSPORT_A_TEST_API_KEY=... TRANSPORT_A_TEST_API_SECRET=... \
 *     pnpm vitest run packages/transport-a/test/end-to-end.test.ts
 * (a local one: `livekit-server --dev` answers on ws://127.0.0.1:7880 with key devkey, secret secret).
 * Skipped otherwise: no transportA server can run on the machines this was written on.
 */
import { collectingLogger } from "@avatar/testkit";
import {
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  type RemoteTrack,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  VideoStream,
} from "@livekit/rtc-node";
import { afterAll, describe, expect, it } from "vitest";
import { syntheticFrames } from "../../media/src/bench/synthetic-frames.js";
import { AVATAR_IDENTITY, roomForSession, TransportAServer, transportAConfig } from "../src/index.js";
import { type PublisherState, retainTransportA, TransportAPublisher } from "../src/publisher/index.js";

const url = process.env.TRANSPORT_A_TEST_URL;
const apiKey = process.env.TRANSPORT_A_TEST_API_KEY;
const apiSecret = process.env.TRANSPORT_A_TEST_API_SECRET;
const available = Boolean(url && apiKey && apiSecret);
if (!available) {
  console.warn(
    "TRANSPORT_A_TEST_URL, TRANSPORT_A_TEST_API_KEY and TRANSPORT_A_TEST_API_SECRET are not all set: " +
      "skipping the transportA end-to-end test (it needs a real transportA server)",
  );
}

const release = available ? retainTransportA() : undefined;
afterAll(async () => {
  await release?.();
});

/** Resolves with the first value `test` accepts from the stream (and cancels it). */
async function firstOf<T>(stream: ReadableStream<T>, test: (value: T) => boolean, what: string): Promise<T> {
  const reader = stream.getReader();
  const deadline = Date.now() + 15_000;
  try {
    while (Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      if (test(value)) return value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  throw new Error(`no ${what} within 15 s`);
}

describe.skipIf(!available)("transportA end to end (a real server)", () => {
  it("a session room: the avatar publishes, a viewer sees and hears it and cannot publish, the room closes", async () => {
    const server = new TransportAServer(
      transportAConfig({ url: url ?? "", apiKey: apiKey ?? "", apiSecret: apiSecret ?? "" }),
      { now: () => new Date() },
    );
    const sessionId = crypto.randomUUID();
    const room = roomForSession(sessionId);
    await server.openSessionRoom(room, sessionId);
    const stop = new AbortController();
    const states: PublisherState[] = [];
    const publishing = new TransportAPublisher({
      url: url ?? "",
      token: await server.avatarToken(room, { lite: false, ttlSeconds: 300 }),
      frames: syntheticFrames({ width: 640, height: 360, signal: stop.signal, realtime: true }),
      codec: "H264",
      log: collectingLogger().log,
      signal: stop.signal,
      onState: (s) => states.push(s),
    }).run();

    const viewer = new Room();
    const tracks = new Map<TrackKind, RemoteTrack>();
    const subscribed = new Promise<void>((resolve) => {
      viewer.on(RoomEvent.TrackSubscribed, (track, _publication, participant) => {
        expect(participant.identity).toBe(AVATAR_IDENTITY);
        if (track.kind !== undefined) tracks.set(track.kind, track);
        if (tracks.size === 2) resolve();
      });
    });
    try {
      const access = await server.access(room, { lite: false, ttlSeconds: 300 });
      await viewer.connect(access.url, access.clientToken, { autoSubscribe: true, dynacast: true });
      await subscribed;
      const video = tracks.get(TrackKind.KIND_VIDEO);
      const audio = tracks.get(TrackKind.KIND_AUDIO);
      if (!video || !audio) throw new Error("the avatar's tracks are missing");
      const { frame } = await firstOf(new VideoStream(video), (e) => e.frame.width > 0, "video frame");
      expect({ width: frame.width, height: frame.height }).toEqual({ width: 640, height: 360 });
      await firstOf(
        new AudioStream(audio, 48_000, 1),
        (f) => f.data.some((sample) => Math.abs(sample) > 1000),
        "audible audio frame",
      );

      // The client token is a viewer's: publishing is refused.
      const source = new AudioSource(48_000, 1);
      const track = LocalAudioTrack.createAudioTrack("intruder", source);
      await expect(
        viewer.localParticipant?.publishTrack(
          track,
          new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
        ),
      ).rejects.toThrow();
      await source.close();
    } finally {
      await viewer.disconnect();
    }

    expect(await server.closeSessionRoom(room)).toBe(true);
    await expect.poll(() => states.at(-1)?.state, { timeout: 10_000 }).toBe("left");
    stop.abort();
    const report = await publishing;
    expect(report.published).toBeGreaterThan(25);
    expect(await server.rooms.list([room])).toEqual([]);
  }, 60_000);
});
