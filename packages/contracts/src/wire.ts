/**
 * The protobuf wire format written straight into one buffer, for the frames on the relay's hot path (the
 * gateway's ClientFrames of client messages, the pipeline's ServerFrames): a size pass, one
 * Buffer.allocUnsafe, then the writes. For a ServerFrame, protobuf-es's create and toBinary cost ~17 µs
 * here and its BinaryWriter ~12 (its lists of small chunks), against ~2 µs; for a frame around a 64 KiB
 * client message the copy of the message is most of the cost either way (~7-9 µs).
 * Field numbers must be below 16 (a one-byte tag). Numbers are JavaScript numbers, so varints stop at
 * 2^53: what does not fit throws a RangeError.
 */

export const VARINT = 0;
export const LENGTH_DELIMITED = 2;

/** A string and its UTF-8 length, measured once: the size pass and the length prefix both use it. */
export interface Text {
  value: string;
  bytes: number;
}

export const text = (value = ""): Text => ({
  value,
  bytes: value === "" ? 0 : Buffer.byteLength(value, "utf8"),
});

/** A length-delimited field of `length` bytes with its tag and length prefix; 0 when empty (proto3). */
export function lengthDelimitedSize(length: number): number {
  return length === 0 ? 0 : 1 + varintSize(length) + length;
}

/** A varint field with its tag; 0 for zero (proto3). */
export function varintFieldSize(value: number): number {
  return value === 0 ? 0 : 1 + varintSize(value);
}

/** Bytes of a non-negative integer (below 2^53: sequence numbers, lengths) as a varint. */
export function varintSize(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${value} is not a non-negative integer below 2^53`);
  let size = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}

export function uint32FieldSize(value: number): number {
  if (value > 0xffffffff) throw new RangeError(`${value} is not a uint32`);
  return varintFieldSize(value);
}

/** An int32 field; a negative int32 is its 64-bit two's complement: ten bytes. */
export function int32FieldSize(value: number): number {
  if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw new RangeError(`${value} is not an int32`);
  return value < 0 ? 11 : varintFieldSize(value);
}

export function writeTag(out: Buffer, at: number, field: number, wireType: number): number {
  out[at] = (field << 3) | wireType;
  return at + 1;
}

export function writeVarint(out: Buffer, at: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

/** A varint field, left out when zero. */
export function writeVarintField(out: Buffer, at: number, field: number, value: number): number {
  return value === 0 ? at : writeVarint(out, writeTag(out, at, field, VARINT), value);
}

/** An int32 field, left out when zero. */
export function writeInt32Field(out: Buffer, at: number, field: number, value: number): number {
  if (value >= 0) return writeVarintField(out, at, field, value);
  let to = writeTag(out, at, field, VARINT);
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out[to++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[to++] = Number(v);
  return to;
}

/** A bool field, left out when false. */
export function writeBoolField(out: Buffer, at: number, field: number, value: boolean | undefined): number {
  if (!value) return at;
  out[writeTag(out, at, field, VARINT)] = 1;
  return at + 2;
}

export function writeStringField(out: Buffer, at: number, field: number, t: Text): number {
  if (t.bytes === 0) return at;
  const start = writeVarint(out, writeTag(out, at, field, LENGTH_DELIMITED), t.bytes);
  return start + out.write(t.value, start, t.bytes, "utf8");
}

/** Bytes as a length-delimited field (a string field's UTF-8 as it is, not decoded and encoded again). */
export function writeBytesField(out: Buffer, at: number, field: number, bytes: Uint8Array): number {
  if (bytes.length === 0) return at;
  const start = writeVarint(out, writeTag(out, at, field, LENGTH_DELIMITED), bytes.length);
  out.set(bytes, start);
  return start + bytes.length;
}
