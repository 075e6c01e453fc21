import { SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { roomForSession, transportADestination } from "../src/index.js";

const SESSION = "5d0f3a57-1b7c-4a9e-8d36-2c8b9e0f1a42";
const full = create(SessionConfigSchema, { mode: SessionMode.FULL });
const lite = create(SessionConfigSchema, { mode: SessionMode.LITE });
const liteInCallersRoom = create(SessionConfigSchema, {
  mode: SessionMode.LITE,
  lite: {
    transportA: {
      transportAUrl: "wss://caller.example/",
      transportARoom: "their-room",
      transportAClientToken: "their-token",
    },
  },
});

describe("where a session's media goes on transportA", () => {
  it("FULL and LITE without transportA_config: the session's room on the deployment's server", () => {
    expect(transportADestination(SESSION, full, true)).toEqual({
      kind: "session-room",
      room: roomForSession(SESSION),
      lite: false,
    });
    expect(transportADestination(SESSION, lite, true)).toEqual({
      kind: "session-room",
      room: roomForSession(SESSION),
      lite: true,
    });
  });

  it("nowhere when the deployment has no server", () => {
    expect(transportADestination(SESSION, full, false)).toBeUndefined();
    expect(transportADestination(SESSION, lite, false)).toBeUndefined();
  });

  it("LITE with transportA_config: the caller's room with the caller's token, server or not", () => {
    const caller = {
      kind: "caller-room",
      url: "wss://caller.example/",
      room: "their-room",
      token: "their-token",
    };
    expect(transportADestination(SESSION, liteInCallersRoom, true)).toEqual(caller);
    expect(transportADestination(SESSION, liteInCallersRoom, false)).toEqual(caller);
  });
});
