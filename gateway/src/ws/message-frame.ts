import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/**
 * A ClientFrame carrying one client message, encoded straight from the bytes the socket received.
 * A proto3 string field is its UTF-8 bytes on the wire, and `ws` has already checked that a text frame
 * is valid UTF-8, so the message is not decoded and encoded again: on a busy gateway that halves the
 * work per audio chunk. Field numbers are those of avatar.pipeline.v1.ClientFrame (the test in
 * gateway/test/message-frame.test.ts decodes the result with the generated schema).
 */
export function messageFrame(
  sessionId: string,
  connectionId: string,
  utf8Json: Uint8Array,
  numbering: { seq: number; ackedSeq: number } = { seq: 0, ackedSeq: 0 },
): Uint8Array {
  const writer = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string(sessionId)
    .tag(2, WireType.LengthDelimited)
    .string(connectionId)
    .tag(3, WireType.LengthDelimited)
    .bytes(utf8Json);
  // seq (5) and acked_seq (6); proto3 leaves zeros out.
  if (numbering.seq > 0) writer.tag(5, WireType.Varint).uint64(numbering.seq);
  if (numbering.ackedSeq > 0) writer.tag(6, WireType.Varint).uint64(numbering.ackedSeq);
  return writer.finish();
}

/**
 * The most a frame adds around a message: five tags, length prefixes and numbers, and two ids of at most
 * 64 bytes (UUIDs are 36). NATS adds its own headers on top, which this margin also covers.
 */
export const FRAME_OVERHEAD_BYTES = 1024;

/** Whether a message of `maxMessageBytes`, framed, fits one bus message of `busMaxPayload`. */
export const relayFits = (maxMessageBytes: number, busMaxPayload: number): boolean =>
  maxMessageBytes + FRAME_OVERHEAD_BYTES <= busMaxPayload;
