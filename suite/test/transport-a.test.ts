/**
 * transportA through the public API on the whole suite, with TRANSPORT_A_* pointing at a local server of
 * transportA's RoomService API: what start answers for each kind of session, what a failing server
 * does to a start, and the token endpoint's answers to unusable transportA_config and to transportB.
 */
import { roomForSession } from "@avatar/transport-a";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RoomServiceTestServer } from "../../packages/transport-a/test/servers/room-service-server.js";
import { ADA, bearer, eventually, grant, key, type Minted } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";
import { expect422, sessionCount } from "./token-support.js";

const KEY = "suite-key";
const SECRET = "suite-secret-suite-secret-suite-secret";

let suite: TestSuite;
let server: RoomServiceTestServer;

beforeAll(async () => {
  server = await RoomServiceTestServer.start(KEY, SECRET);
  suite = await startTestSuite({
    env: {
      TRANSPORT_A_URL: server.url,
      TRANSPORT_A_PUBLIC_URL: "wss://sfu.example.test",
      TRANSPORT_A_API_KEY: KEY,
      TRANSPORT_A_API_SECRET: SECRET,
    },
    overrides: { rateLimitStore: { increment: async () => 1 } },
  });
  await grant(suite, "1000");
});
afterAll(async () => {
  await suite?.stop();
  await server?.close();
});
beforeEach(() => {
  server.failWith = undefined;
});

const token = (body: Record<string, unknown>) =>
  suite.request("POST", "/v1/sessions/token", {
    headers: key(suite.apiKey),
    body: { avatar_id: ADA, ...body },
  });

async function mint(body: Record<string, unknown> = {}): Promise<Minted> {
  const res = await token(body);
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(200);
  return payload.data;
}

const start = (m: Minted) =>
  suite.request("POST", "/v1/sessions/start", { headers: bearer(m.session_token) });
const stop = (m: Minted) => suite.request("POST", "/v1/sessions/stop", { headers: bearer(m.session_token) });

const callersRoom = {
  transportA_url: "wss://caller.example",
  transportA_room: "their-room",
  transportA_client_token: "THEIR-TOKEN",
};

describe("POST /v1/sessions/start with a transportA server", () => {
  it("FULL: the session's room, its public URL and a viewer's token; the room goes when the session ends", async () => {
    const m = await mint({ mode: "FULL" });
    const res = await start(m);
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(Object.keys(data).sort()).toEqual([
      "max_session_duration",
      "session_id",
      "transportA_agent_token",
      "transportA_client_token",
      "transportA_url",
      "ws_url",
    ]);
    expect(data.transportA_url).toBe("wss://sfu.example.test");
    expect(data.transportA_agent_token).toBeNull();
    const room = roomForSession(m.session_id);
    const viewer = decodeJwt(data.transportA_client_token);
    expect(viewer.iss).toBe(KEY);
    expect(viewer.sub).toMatch(/^viewer-/);
    expect(viewer.video).toEqual({
      roomJoin: true,
      room,
      canSubscribe: true,
      canPublish: false,
      canPublishData: false,
    });
    expect(JSON.stringify(data)).not.toContain(SECRET);
    expect(server.rooms.has(room)).toBe(true);

    expect((await stop(m)).status).toBe(200);
    await eventually(async () => expect(server.rooms.has(room)).toBe(false));
  });

  it("LITE without transportA_config: also a token for the caller's agent to publish its audio", async () => {
    const m = await mint({ mode: "LITE" });
    const { data } = await json(await start(m));
    const agent = decodeJwt(data.transportA_agent_token);
    expect(agent).toMatchObject({ sub: "agent", kind: "agent" });
    expect(agent.video).toMatchObject({
      room: roomForSession(m.session_id),
      canPublish: true,
      canPublishSources: ["microphone"],
      canPublishData: true,
    });
    expect(decodeJwt(data.transportA_client_token).video).toMatchObject({ canPublish: false });
    await stop(m);
  });

  it("LITE with transportA_config: no room here and no transportA fields (the caller has its room)", async () => {
    const m = await mint({ mode: "LITE", transportA_config: callersRoom });
    const res = await start(m);
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(Object.keys(data).sort()).toEqual(["max_session_duration", "session_id", "ws_url"]);
    expect(JSON.stringify(data)).not.toContain("THEIR-TOKEN");
    expect(server.rooms.has(roomForSession(m.session_id))).toBe(false);
    await stop(m);
  });

  it("a server that cannot create the room: 503 saying so, the session can be started again", async () => {
    const m = await mint();
    server.failWith = 503;
    const res = await start(m);
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual({
      code: 5030,
      data: null,
      message: "transportA is unavailable: the session's media room could not be created; try starting again",
    });
    server.failWith = undefined;
    const again = await start(m);
    expect(again.status).toBe(201);
    expect((await json(again)).data.transportA_client_token).toBeTruthy();
    await stop(m);
  });
});

describe("POST /v1/sessions/token: transport configurations", () => {
  const lite = (config: Record<string, unknown>) => ({ mode: "LITE", transportA_config: config });

  it("a transportA_url that is not ws, wss, http or https is a 422", async () => {
    const before = await sessionCount(suite);
    expect(
      await expect422(await token(lite({ ...callersRoom, transportA_url: "ftp://caller.example" }))),
    ).toEqual([
      {
        type: "url_scheme",
        loc: ["body", "transportA_config", "transportA_url"],
        msg: "URL scheme should be 'ws', 'wss', 'http' or 'https'",
        input: "ftp://caller.example",
        ctx: { expected_schemes: "'ws', 'wss', 'http' or 'https'" },
      },
    ]);
    expect(await expect422(await token(lite({ ...callersRoom, transportA_url: "caller.example" })))).toEqual([
      {
        type: "url_parsing",
        loc: ["body", "transportA_config", "transportA_url"],
        msg: "Input should be a valid URL, relative URL without a base",
        input: "caller.example",
        ctx: { error: "relative URL without a base" },
      },
    ]);
    expect(await sessionCount(suite)).toBe(before);
  });

  it("an empty room or token is a 422", async () => {
    const entries = await expect422(
      await token(lite({ ...callersRoom, transportA_room: "", transportA_client_token: "" })),
    );
    expect(entries).toEqual(
      ["transportA_room", "transportA_client_token"].map((field) => ({
        type: "string_too_short",
        loc: ["body", "transportA_config", field],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      })),
    );
  });

  it("transportB_config: 400 naming the field, whatever selects the LITE shape; no session is created", async () => {
    const transportB_config = {
      transportB_app_id: "app",
      transportB_token: "tok",
      transportB_channel: "channel",
      transportB_uid: "uid",
    };
    const before = await sessionCount(suite);
    for (const body of [
      { mode: "LITE", transportB_config },
      { mode: "CUSTOM", transportB_config },
      { transportB_config },
      { mode: "LITE", transportB_config, transportA_config: callersRoom },
    ]) {
      const res = await token(body);
      expect({ status: res.status, body: await json(res) }).toEqual({
        status: 400,
        body: {
          code: 4000,
          data: null,
          message: "transportB_config: transportB is not available in this deployment",
        },
      });
    }
    expect(await sessionCount(suite)).toBe(before);
  });
});
