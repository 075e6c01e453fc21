import { createServer } from "node:net";
import { freePort } from "@avatar/runtime";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ROOM_DEPARTURE_TIMEOUT_SECONDS,
  ROOM_EMPTY_TIMEOUT_SECONDS,
  roomForSession,
  TransportARefusedError,
  TransportARooms,
  TransportAServer,
  TransportAUnavailableError,
  transportAConfig,
} from "../src/index.js";
import { RoomServiceTestServer } from "./servers/room-service-server.js";

const KEY = "devkey";
const SECRET = "devsecret-devsecret-devsecret-devsecret";
const SESSION = "0b7e5c1e-8f7d-4a5e-9d1c-3b2a1f0e9d8c";

let server: RoomServiceTestServer;
let transportA: TransportAServer;

beforeAll(async () => {
  server = await RoomServiceTestServer.start(KEY, SECRET);
  transportA = new TransportAServer(
    transportAConfig({ url: server.url.replace("http:", "ws:"), apiKey: KEY, apiSecret: SECRET }),
    { now: () => new Date() },
  );
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.rooms.clear();
  server.calls.length = 0;
  server.failWith = undefined;
});

describe("session rooms over the server API (Twirp RoomService)", () => {
  it("opens a session's room with its timeouts and metadata, once however often asked", async () => {
    const room = roomForSession(SESSION);
    expect(room).toBe(`avatar-session-${SESSION}`);
    const first = await transportA.openSessionRoom(room, SESSION);
    expect(first).toMatchObject({
      name: room,
      emptyTimeout: ROOM_EMPTY_TIMEOUT_SECONDS,
      departureTimeout: ROOM_DEPARTURE_TIMEOUT_SECONDS,
      numParticipants: 0,
    });
    expect(JSON.parse(first.metadata)).toEqual({ session_id: SESSION });
    const again = await transportA.openSessionRoom(room, SESSION);
    expect(again.sid).toBe(first.sid);
    const [call] = server.callsOf("CreateRoom");
    expect(call).toMatchObject({ format: "json", status: 200 });
    expect(call?.body).toMatchObject({ name: room, emptyTimeout: 300, departureTimeout: 60 });
    // The SDK signs each call with a short-lived token carrying only the grant the call needs.
    expect(call?.grant).toEqual({ roomCreate: true });
  });

  it("lists and deletes; deleting a room that is gone answers false", async () => {
    const room = roomForSession(SESSION);
    await transportA.openSessionRoom(room, SESSION);
    await transportA.openSessionRoom(roomForSession(crypto.randomUUID()), "other");
    expect((await transportA.rooms.list([room])).map((r) => r.name)).toEqual([room]);
    expect(await transportA.rooms.list()).toHaveLength(2);
    expect(server.callsOf("ListRooms")[0]?.grant).toEqual({ roomList: true });
    expect(await transportA.closeSessionRoom(room)).toBe(true);
    expect(server.rooms.has(room)).toBe(false);
    expect(await transportA.closeSessionRoom(room)).toBe(false);
    expect(server.callsOf("DeleteRoom").map((c) => c.status)).toEqual([200, 404]);
  });

  it("a wrong secret is refused (401), not mistaken for an outage", async () => {
    const wrong = new TransportARooms(
      transportAConfig({ url: server.url, apiKey: KEY, apiSecret: "not-the-secret" }),
    );
    const err = await wrong
      .create("r", { emptyTimeoutSeconds: 1, departureTimeoutSeconds: 1 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(TransportARefusedError);
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/^transportA refused CreateRoom \(401 unauthenticated/);
    expect(err.message).not.toContain("not-the-secret");
    expect(server.rooms.size).toBe(0);
  });

  it("a failing server (5xx) and an unreachable one are unavailable", async () => {
    server.failWith = 503;
    const failing = await transportA.openSessionRoom("r", SESSION).catch((e) => e);
    expect(failing).toBeInstanceOf(TransportAUnavailableError);
    expect(failing.message).toBe("transportA CreateRoom failed (503 unavailable: server is failing)");

    const port = await freePort();
    const nowhere = new TransportARooms(
      transportAConfig({ url: `http://127.0.0.1:${port}`, apiKey: KEY, apiSecret: SECRET }),
    );
    const unreachable = await nowhere.delete("r").catch((e) => e);
    expect(unreachable).toBeInstanceOf(TransportAUnavailableError);
    expect(unreachable.message).toMatch(/^transportA DeleteRoom failed: fetch failed \(ECONNREFUSED\)$/);
    expect(unreachable.message).not.toContain(SECRET);
  });

  it("a server that does not answer in time is unavailable", async () => {
    const sockets = new Set<import("node:net").Socket>();
    const silent = createServer((socket) => sockets.add(socket)); // accepts and never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const slow = new TransportARooms(
        transportAConfig({ url: `http://127.0.0.1:${port}`, apiKey: KEY, apiSecret: SECRET }),
        { requestTimeoutSeconds: 0.3 },
      );
      const err = await slow.list().catch((e) => e);
      expect(err).toBeInstanceOf(TransportAUnavailableError);
      expect(err.message).toBe("transportA ListRooms failed: no answer in time");
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe("the local RoomService server speaks the protocol, not just what this client sends", () => {
  it("answers protobuf requests in protobuf, and Twirp errors for a bad route or body", async () => {
    const { CreateRoomRequest, Room } = await import("@livekit/protocol");
    const { AccessToken } = await import("livekit-server-sdk");
    const at = new AccessToken(KEY, SECRET, { ttl: 60 });
    at.addGrant({ roomCreate: true });
    const auth = `Bearer ${await at.toJwt()}`;
    const res = await fetch(`${server.url}/twirp/livekit.RoomService/CreateRoom`, {
      method: "POST",
      headers: { "content-type": "application/protobuf", authorization: auth },
      body: new CreateRoomRequest({ name: "pb-room", emptyTimeout: 7 }).toBinary(),
    });
    expect(res.headers.get("content-type")).toBe("application/protobuf");
    const room = Room.fromBinary(new Uint8Array(await res.arrayBuffer()));
    expect(room).toMatchObject({ name: "pb-room", emptyTimeout: 7 });

    const unknown = await fetch(`${server.url}/twirp/livekit.RoomService/Nope`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: auth },
      body: "{}",
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "bad_route" });
    const garbage = await fetch(`${server.url}/twirp/livekit.RoomService/CreateRoom`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: auth },
      body: "{not json",
    });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ code: "malformed" });
  });
});
