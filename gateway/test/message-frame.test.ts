import { ClientFrameSchema, ConnectionKind } from "@avatar/contracts/pipeline";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FRAME_OVERHEAD_BYTES, messageFrame, relayFits } from "../src/ws/message-frame.js";

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

  it("adds less than FRAME_OVERHEAD_BYTES around a message, with the longest ids the gateway makes", () => {
    const message = Buffer.alloc(1024 * 1024, 0x20);
    const frame = messageFrame(crypto.randomUUID(), crypto.randomUUID(), message);
    expect(frame.length - message.length).toBeLessThan(FRAME_OVERHEAD_BYTES);
  });

  it("says whether a framed message fits the bus: NATS's 1 MiB default does not fit a 1 MiB message", () => {
    expect(relayFits(1024 * 1024, 1024 * 1024)).toBe(false);
    expect(relayFits(1024 * 1024, 8 * 1024 * 1024)).toBe(true);
    expect(relayFits(1024 * 1024, Number.POSITIVE_INFINITY)).toBe(true);
  });
});
