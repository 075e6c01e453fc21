import { ServerFrameSchema } from "@avatar/contracts/pipeline";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ServerFrameFields, serverFrameBytes } from "../src/realtime/server-frame-bytes.js";

const sessionId = "0b6f3c1e-52a4-4d8e-9f31-6a1d2c7e8b90";
const connectionId = "c7a1e2d3-0f4b-4c5d-8e6f-7a8b9c0d1e2f";

/** The bytes the generated schema writes for the same fields. */
function viaSchema(f: ServerFrameFields): Uint8Array {
  return toBinary(
    ServerFrameSchema,
    create(ServerFrameSchema, {
      ...f,
      ackSeq: BigInt(f.ackSeq ?? 0),
      acks: (f.acks ?? []).map((a) => ({ connectionId: a.connectionId, seq: BigInt(a.seq) })),
    }),
  );
}

const cases: [string, ServerFrameFields][] = [
  ["the session alone", { sessionId }],
  [
    "an event to all, with acknowledgements",
    {
      sessionId,
      json: '{"type":"agent.audio_buffer_appended"}',
      epoch: 3,
      acks: [
        { connectionId, seq: 17 },
        { connectionId: "other", seq: 0 },
      ],
    },
  ],
  ["an acknowledgement asking for a resend", { sessionId, connectionId, ackSeq: 2 ** 40 + 5, resend: true }],
  [
    "a close with its code and reason",
    { sessionId, connectionId, close: true, closeCode: 4000, closeReason: "session ended" },
  ],
  ["a negative close code (ten bytes, as an int32 is written)", { sessionId, closeCode: -1 }],
  ["the largest epoch", { sessionId, epoch: 2 ** 32 - 1 }],
  ["non-ASCII text", { sessionId, json: '{"text":"Grüße, 世界 🎉"}', closeReason: "ça va" }],
  ["a lone surrogate (written as U+FFFD, as TextEncoder does)", { sessionId, json: '{"text":"\ud800"}' }],
  ["text longer than a one-byte and a two-byte length", { sessionId, json: "x".repeat(20_000) }],
  [
    "zeros and empty strings, which proto3 leaves out",
    { sessionId, connectionId: "", json: "", close: false, closeCode: 0, epoch: 0, ackSeq: 0, resend: false },
  ],
];

describe("serverFrameBytes", () => {
  it.each(cases)("writes the schema's bytes: %s", (_name, fields) => {
    const bytes = serverFrameBytes(fields);
    expect(Buffer.from(bytes).equals(Buffer.from(viaSchema(fields)))).toBe(true);
    const read = fromBinary(ServerFrameSchema, bytes);
    expect(read.sessionId).toBe(fields.sessionId);
    // Text as UTF-8 carries it: a lone surrogate comes back as U+FFFD.
    expect(read.json).toBe(Buffer.from(fields.json ?? "").toString("utf8"));
    expect(read.closeCode).toBe(fields.closeCode ?? 0);
    expect(read.ackSeq).toBe(BigInt(fields.ackSeq ?? 0));
    expect(read.acks.map((a) => [a.connectionId, Number(a.seq)])).toEqual(
      (fields.acks ?? []).map((a) => [a.connectionId, a.seq]),
    );
  });

  it("refuses numbers a frame cannot carry rather than writing other ones", () => {
    expect(() => serverFrameBytes({ sessionId, ackSeq: -1 })).toThrow(RangeError);
    expect(() => serverFrameBytes({ sessionId, epoch: 1.5 })).toThrow(RangeError);
    expect(() => serverFrameBytes({ sessionId, epoch: 2 ** 32 })).toThrow(RangeError);
    expect(() => serverFrameBytes({ sessionId, closeCode: 2 ** 31 })).toThrow(RangeError);
    expect(() => serverFrameBytes({ sessionId, acks: [{ connectionId, seq: 2 ** 53 }] })).toThrow(RangeError);
  });
});
