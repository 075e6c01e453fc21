import { ClientFrameSchema, ConnectionKind } from "@avatar/contracts/pipeline";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
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

  it("carries the message's number and the acknowledged floor", () => {
    const frame = fromBinary(
      ClientFrameSchema,
      messageFrame("s-1", "c-2", Buffer.from("{}"), { seq: 2 ** 40, ackedSeq: 7 }),
    );
    expect(frame).toMatchObject({ json: "{}", seq: 2n ** 40n, ackedSeq: 7n });
  });

  it.each([
    { seq: 0, ackedSeq: 0, json: "{}" },
    { seq: 1, ackedSeq: 0, json: '{"type":"agent.speak","text":"héllo ✓ 🎤"}' },
    { seq: 300, ackedSeq: 127, json: `{"audio":"${"A".repeat(70_000)}"}` },
    { seq: Number.MAX_SAFE_INTEGER, ackedSeq: 2 ** 32, json: "" },
  ])(
    "writes the bytes the generated schema writes (seq $seq, acked $ackedSeq)",
    ({ seq, ackedSeq, json }) => {
      const sessionId = crypto.randomUUID();
      const connectionId = crypto.randomUUID();
      const ours = messageFrame(sessionId, connectionId, Buffer.from(json, "utf8"), { seq, ackedSeq });
      const theirs = toBinary(
        ClientFrameSchema,
        create(ClientFrameSchema, {
          sessionId,
          connectionId,
          json,
          seq: BigInt(seq),
          ackedSeq: BigInt(ackedSeq),
        }),
      );
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
    },
  );

  it("refuses a number a frame cannot carry", () => {
    const message = Buffer.from("{}");
    expect(() => messageFrame("s", "c", message, { seq: -1, ackedSeq: 0 })).toThrow(RangeError);
    expect(() => messageFrame("s", "c", message, { seq: 1, ackedSeq: 2 ** 53 })).toThrow(RangeError);
  });

  it("adds less than FRAME_OVERHEAD_BYTES around a message, with the longest ids the gateway makes", () => {
    const message = Buffer.alloc(1024 * 1024, 0x20);
    const numbering = { seq: Number.MAX_SAFE_INTEGER, ackedSeq: Number.MAX_SAFE_INTEGER };
    const frame = messageFrame(crypto.randomUUID(), crypto.randomUUID(), message, numbering);
    expect(frame.length - message.length).toBeLessThan(FRAME_OVERHEAD_BYTES);
  });

  it("says whether a framed message fits the bus: NATS's 1 MiB default does not fit a 1 MiB message", () => {
    expect(relayFits(1024 * 1024, 1024 * 1024)).toBe(false);
    expect(relayFits(1024 * 1024, 8 * 1024 * 1024)).toBe(true);
    expect(relayFits(1024 * 1024, Number.POSITIVE_INFINITY)).toBe(true);
  });
});
