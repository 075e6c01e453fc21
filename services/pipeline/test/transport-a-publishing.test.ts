import { SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import { SessionSchema } from "@avatar/contracts/sessions";
import { freePort } from "@avatar/runtime";
import { collectingLogger } from "@avatar/testkit";
import { roomForSession } from "@avatar/transport-a";
import { create } from "@bufbuild/protobuf";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syntheticFrames } from "../../../packages/media/src/bench/synthetic-frames.js";
import { RoomServiceTestServer } from "../../../packages/transport-a/test/servers/room-service-server.js";
import { TransportAPublishing } from "../src/media/transport-a.js";

/**
 * The worker's side of transportA: where each session's media goes, the avatar's token for a session
 * room (on the worker's own clock), and a publisher that reports a room it cannot join instead of
 * failing the session.
 */

const KEY = "devkey";
const SECRET = "devsecret-devsecret-devsecret-0002";
/** The worker's clock, far from the machine's: the token's times follow it. */
const NOW = Date.parse("2030-01-02T03:04:05.000Z");

let server: RoomServiceTestServer;
let publishing: TransportAPublishing;
const env = () => ({ TRANSPORT_A_URL: server.url, TRANSPORT_A_API_KEY: KEY, TRANSPORT_A_API_SECRET: SECRET });

beforeAll(async () => {
  server = await RoomServiceTestServer.start(KEY, SECRET);
  publishing = TransportAPublishing.fromEnv(env(), collectingLogger().log, () => NOW);
});
afterAll(async () => {
  await publishing?.close();
  await server?.close();
});

const session = (maxSessionDuration = 600) =>
  create(SessionSchema, { id: crypto.randomUUID(), maxSessionDuration });
const full = create(SessionConfigSchema, { mode: SessionMode.FULL });
const lite = create(SessionConfigSchema, { mode: SessionMode.LITE });

describe("the avatar's token for a session room", () => {
  it("FULL: joins as the avatar and agent, publishes camera and microphone, until the session's longest run", async () => {
    const s = session(900);
    const destination = publishing.destination(s, full);
    expect(destination).toEqual({ kind: "session-room", room: roomForSession(s.id), lite: false });
    if (!destination) return;
    const { url, token } = await publishing.target(destination, s);
    expect(url).toBe(server.url);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: KEY, sub: "avatar", kind: "agent" });
    expect(claims.attributes).toBeUndefined();
    expect(claims.video).toMatchObject({
      room: roomForSession(s.id),
      canPublish: true,
      canSubscribe: false,
      canPublishSources: ["camera", "microphone"],
    });
    expect(claims.nbf).toBe(NOW / 1000);
    expect(claims.exp).toBe(NOW / 1000 + 900 + 60);
  });

  it("LITE: publishes on behalf of the caller's agent", async () => {
    const s = session();
    const destination = publishing.destination(s, lite);
    if (!destination) throw new Error("no destination");
    const claims = decodeJwt((await publishing.target(destination, s)).token);
    expect(claims.attributes).toEqual({ "lk.publish_on_behalf": "agent" });
  });
});

describe("publishing a session", () => {
  it("nowhere without a server of the deployment's or a caller's room: no publication", async () => {
    const none = TransportAPublishing.fromEnv({}, collectingLogger().log, () => NOW);
    const frames = syntheticFrames({ width: 640, height: 360, count: 1 });
    expect(await none.publish({ session: session(), config: full, frames, codec: "H264" })).toBeUndefined();
    await none.close();
  });

  it("a LITE caller's room is joined with the caller's URL and token, even without a server here", async () => {
    const port = await freePort();
    const { log, records } = collectingLogger();
    const none = TransportAPublishing.fromEnv({}, log, () => NOW);
    const config = create(SessionConfigSchema, {
      mode: SessionMode.LITE,
      lite: {
        transportA: {
          transportAUrl: `ws://127.0.0.1:${port}/`,
          transportARoom: "their-room",
          transportAClientToken: "THEIR-TOKEN",
        },
      },
    });
    const s = session();
    const destination = none.destination(s, config);
    expect(destination).toEqual({
      kind: "caller-room",
      url: `ws://127.0.0.1:${port}/`,
      room: "their-room",
      token: "THEIR-TOKEN",
    });
    if (!destination) return;
    expect(await none.target(destination, s)).toEqual({
      url: `ws://127.0.0.1:${port}/`,
      token: "THEIR-TOKEN",
    });
    const states: string[] = [];
    const publication = await none.publish({
      session: s,
      config,
      frames: syntheticFrames({ width: 640, height: 360, count: 12, realtime: true }),
      codec: "VP8",
      onState: (state) => states.push(state.state),
    });
    const report = await publication?.done;
    expect(report).toMatchObject({ published: 0, dropped: 12 });
    expect(report?.failure).toMatch(/Connection refused/);
    // The frames ended (12 frames, 480 ms) before a second attempt was due: the publisher stopped.
    expect(states[0]).toBe("joining");
    expect(records().some((r) => r.sessionId === s.id && r.transportA === "caller-room")).toBe(true);
    await none.close();
  });

  it("a session room it cannot join is retried and reported; the frames go on being drained", async () => {
    const states: string[] = [];
    const stop = new AbortController();
    const publication = await publishing.publish({
      session: session(),
      config: full,
      frames: syntheticFrames({ width: 640, height: 360, signal: stop.signal, realtime: true }),
      signal: stop.signal,
      onState: (state) => {
        states.push(state.state);
        if (states.length === 2) stop.abort();
      },
    });
    expect(publication?.destination.kind).toBe("session-room");
    const report = await publication?.done;
    expect(states).toEqual(["joining", "joining"]);
    expect(report?.published).toBe(0);
    expect(report?.dropped).toBeGreaterThan(0);
    expect(report?.failure).toBeTruthy();
  });
});
