import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/**
 * A ClientFrame carrying one client message, encoded straight from the bytes the socket received.
 * A proto3 string field is its UTF-8 bytes on the wire, and `ws` has already checked that a text frame
 * is valid UTF-8, so the message is not decoded and encoded again: on a busy gateway that halves the
 * work per audio chunk. Field numbers are those of avatar.pipeline.v1.ClientFrame (the test in
 * gateway/test/message-frame.test.ts decodes the result with the generated schema).
 */
export function messageFrame(sessionId: string, connectionId: string, utf8Json: Uint8Array): Uint8Array {
  return new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string(sessionId)
    .tag(2, WireType.LengthDelimited)
    .string(connectionId)
    .tag(3, WireType.LengthDelimited)
    .bytes(utf8Json)
    .finish();
}

/**
 * The most a frame adds around a message: three tags and length prefixes, and two ids of at most 64
 * bytes (UUIDs are 36). NATS adds its own headers on top, which this margin also covers.
 */
export const FRAME_OVERHEAD_BYTES = 1024;

/** Whether a message of `maxMessageBytes`, framed, fits one bus message of `busMaxPayload`. */
export const relayFits = (maxMessageBytes: number, busMaxPayload: number): boolean =>
  maxMessageBytes + FRAME_OVERHEAD_BYTES <= busMaxPayload;
