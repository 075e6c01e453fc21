import { randomUUID } from "node:crypto";
import { SessionMode } from "@avatar/contracts/common";
import { SessionState } from "@avatar/contracts/sessions";
import { ConfigError, errorDetailOf } from "@avatar/runtime";
import { roomForSession } from "@avatar/transport-a";
import { Code } from "@connectrpc/connect";
import { decodeJwt, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RoomServiceTestServer } from "../../../packages/transport-a/test/servers/room-service-server.js";
import {
  config,
  eventually,
  failure,
  type Harness,
  harness,
  ledgerOf,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/**
 * Session rooms on the deployment's transportA server, against a local server of its RoomService API:
 * opened by the start, answered with tokens, closed when the session ends; an unreachable server fails
 * the start with a clear 503 and gives the escrow back.
 */

const KEY = "devkey";
const SECRET = "devsecret-devsecret-devsecret-0001";

let t: SessionsTestDb;
let server: RoomServiceTestServer;
let h: Harness;

beforeAll(async () => {
  t = await openSessionsDb();
  server = await RoomServiceTestServer.start(KEY, SECRET);
  h = harness(t.db, {
    env: {
      TRANSPORT_A_URL: server.url,
      TRANSPORT_A_PUBLIC_URL: "wss://sfu.example.test",
      TRANSPORT_A_API_KEY: KEY,
      TRANSPORT_A_API_SECRET: SECRET,
    },
  });
  await h.app.start?.();
});
afterAll(async () => {
  await h?.app.stop?.();
  await server?.close();
  await t?.close();
});
beforeEach(() => {
  server.failWith = undefined;
});

async function space(credits = "100") {
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount: credits, note: "test" });
  return spaceId;
}

const liteInCallersRoom = config({
  mode: SessionMode.LITE,
  lite: {
    transportA: {
      transportAUrl: "wss://caller.example/",
      transportARoom: "their-room",
      transportAClientToken: "THEIR-TOKEN",
    },
  },
});

describe("a FULL session on a deployment with a transportA server", () => {
  it("gets its room at start; start answers the public URL and a viewer's token until its latest end", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId, maxSessionDuration: 900 });
    const room = roomForSession(s.id);
    expect(server.rooms.has(room)).toBe(false);
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(server.rooms.has(room)).toBe(true);
    expect(res.transportAUrl).toBe("wss://sfu.example.test");
    expect(res.transportAAgentToken).toBe("");
    const claims = decodeJwt(res.transportAClientToken);
    expect(claims.video).toMatchObject({ room, roomJoin: true, canSubscribe: true, canPublish: false });
    // On the service's clock: valid from the start until 60 s after the session's maximum end.
    const startedAt = h.clock.now().getTime() / 1000;
    expect(claims.nbf).toBe(startedAt);
    expect(claims.exp).toBe(startedAt + 900 + 60);
    await expect(
      jwtVerify(res.transportAClientToken, new TextEncoder().encode(SECRET), { currentDate: h.clock.now() }),
    ).resolves.toBeTruthy();
  });

  it("a second start answers the same room with a fresh viewer, without asking the server again", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const first = await h.client.startSession({ spaceId, sessionId: s.id });
    const creates = server.callsOf("CreateRoom").length;
    const second = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(server.callsOf("CreateRoom")).toHaveLength(creates);
    expect(decodeJwt(second.transportAClientToken).video).toEqual(
      decodeJwt(first.transportAClientToken).video,
    );
    expect(decodeJwt(second.transportAClientToken).sub).not.toBe(decodeJwt(first.transportAClientToken).sub);
  });

  it("its room is closed when it ends", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    await h.client.startSession({ spaceId, sessionId: s.id });
    const room = roomForSession(s.id);
    expect(server.rooms.has(room)).toBe(true);
    await h.client.stopSession({ spaceId, sessionId: s.id });
    await eventually(async () => expect(server.rooms.has(room)).toBe(false));
    expect(server.callsOf("DeleteRoom").at(-1)?.body).toEqual({ room });
  });
});

describe("LITE sessions", () => {
  it("without transportA_config: a room of their own, and an agent token for the caller's agent", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId, config: config({ mode: SessionMode.LITE }) });
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    const room = roomForSession(s.id);
    expect(server.rooms.has(room)).toBe(true);
    expect(decodeJwt(res.transportAClientToken).video).toMatchObject({ room, canPublish: false });
    const agent = decodeJwt(res.transportAAgentToken);
    expect(agent).toMatchObject({ sub: "agent", kind: "agent" });
    expect(agent.video).toMatchObject({ room, canPublish: true, canPublishSources: ["microphone"] });
  });

  it("with transportA_config: no room here, and the caller's token is never answered back", async () => {
    const spaceId = await space();
    const creates = server.callsOf("CreateRoom").length;
    const s = await newSession(h.client, { spaceId, config: liteInCallersRoom });
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(server.callsOf("CreateRoom")).toHaveLength(creates);
    expect(res).toMatchObject({ transportAUrl: "", transportAClientToken: "", transportAAgentToken: "" });
    await h.client.stopSession({ spaceId, sessionId: s.id });
  });
});

describe("a transportA server that cannot create the room", () => {
  it("fails the start with 503 and a clear message; nothing is charged and a later start works", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    server.failWith = 503;
    const err = await failure(h.client.startSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toBe(
      "transportA is unavailable: the session's media room could not be created; try starting again",
    );
    expect(errorDetailOf(err)?.reason).toBe("TRANSPORT_A_UNAVAILABLE");
    const { session } = await h.client.getSession({ spaceId, sessionId: s.id });
    expect(session?.state).toBe(SessionState.CREATED);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("10");
    expect(await ledgerOf(h.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
    ]);

    server.failWith = undefined;
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(res.session?.state).toBe(SessionState.STARTED);
    expect(res.transportAClientToken).not.toBe("");
  });
});

describe("configuration", () => {
  it("without TRANSPORT_A_*: no room, no call, empty transportA fields", async () => {
    const plain = harness(t.db);
    const spaceId = randomUUID();
    await plain.client.grantCredits({ spaceId, amount: "10", note: "test" });
    const s = await newSession(plain.client, { spaceId });
    const calls = server.calls.length;
    const res = await plain.client.startSession({ spaceId, sessionId: s.id });
    expect(res).toMatchObject({ transportAUrl: "", transportAClientToken: "", transportAAgentToken: "" });
    expect(server.calls).toHaveLength(calls);
    expect(plain.app.rooms).toBeUndefined();
  });

  it("a partial TRANSPORT_A_* configuration stops the service at start", () => {
    expect(() => harness(t.db, { env: { TRANSPORT_A_URL: server.url } })).toThrow(ConfigError);
  });
});
