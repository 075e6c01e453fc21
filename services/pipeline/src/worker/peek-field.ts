import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

/**
 * A message's embedded message (field `outer`) as bytes, and that message's string field `inner`, read
 * from the wire without decoding anything else: for messages that every worker or replica hears and
 * few of them need. Undefined when the bytes hold no such field or are not a message. The bytes are a
 * view of `message`: copy them to keep them past the bus's delivery.
 */
export function peekNestedString(
  message: Uint8Array,
  outer: number,
  inner: number,
): { bytes: Uint8Array; value: string } | undefined {
  try {
    const reader = new BinaryReader(message);
    if (!seek(reader, outer)) return undefined;
    const bytes = reader.bytes();
    const nested = new BinaryReader(bytes);
    return seek(nested, inner) ? { bytes, value: nested.string() } : undefined;
  } catch {} // not a message
  return undefined;
}

/** Moves the reader to the value of the first length-delimited field `field`; false when there is none. */
function seek(reader: BinaryReader, field: number): boolean {
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    if (number === field && wireType === WireType.LengthDelimited) return true;
    reader.skip(wireType);
  }
  return false;
}
