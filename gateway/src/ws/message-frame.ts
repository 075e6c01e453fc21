import {
  lengthDelimitedSize,
  text,
  varintFieldSize,
  writeBytesField,
  writeStringField,
  writeVarintField,
} from "@avatar/contracts/wire";

/**
 * A ClientFrame carrying one client message, encoded straight from the bytes the socket received
 * (@avatar/contracts/wire). A proto3 string field is its UTF-8 bytes on the wire, and `ws` has already
 * checked that a text frame is valid UTF-8, so the message is not decoded and encoded again. Field
 * numbers are those of avatar.pipeline.v1.ClientFrame (the test in gateway/test/message-frame.test.ts
 * compares the result with the generated schema's).
 */
export function messageFrame(
  sessionId: string,
  connectionId: string,
  utf8Json: Uint8Array,
  numbering: { seq: number; ackedSeq: number } = { seq: 0, ackedSeq: 0 },
): Uint8Array {
  const session = text(sessionId);
  const connection = text(connectionId);
  const size =
    lengthDelimitedSize(session.bytes) +
    lengthDelimitedSize(connection.bytes) +
    lengthDelimitedSize(utf8Json.length) +
    varintFieldSize(numbering.seq) +
    varintFieldSize(numbering.ackedSeq);
  const out = Buffer.allocUnsafe(size);
  let at = writeStringField(out, 0, 1, session);
  at = writeStringField(out, at, 2, connection);
  at = writeBytesField(out, at, 3, utf8Json);
  // seq (5) and acked_seq (6)
  at = writeVarintField(out, at, 5, numbering.seq);
  at = writeVarintField(out, at, 6, numbering.ackedSeq);
  if (at !== size) throw new Error(`ClientFrame: wrote ${at} bytes of ${size}`);
  return out;
}

/**
 * The most a frame adds around a message: five tags, length prefixes and numbers, and two ids of at most
 * 64 bytes (UUIDs are 36). NATS adds its own headers on top, which this margin also covers.
 */
export const FRAME_OVERHEAD_BYTES = 1024;

/** Whether a message of `maxMessageBytes`, framed, fits one bus message of `busMaxPayload`. */
export const relayFits = (maxMessageBytes: number, busMaxPayload: number): boolean =>
  maxMessageBytes + FRAME_OVERHEAD_BYTES <= busMaxPayload;
