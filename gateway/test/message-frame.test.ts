import { ClientFrameSchema, ConnectionKind } from "@avatar/contracts/pipeline";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { messageFrame } from "../src/ws/message-frame.js";

describe("messageFrame", () => {
  it("is a ClientFrame carrying the message as its json, byte for byte", () => {
    const json = '{"type":"agent.speak","text":"héllo ✓ 🎤"}';
    const frame = fromBinary(ClientFrameSchema, messageFrame("s-1", "c-2", Buffer.from(json, "utf8")));
    expect(frame).toMatchObject({
      sessionId: "s-1",
      connectionId: "c-2",
      json,
      connection: ConnectionKind.UNSPECIFIED,
    });
  });
});
