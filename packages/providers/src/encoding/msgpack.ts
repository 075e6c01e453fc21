/**
 * The MessagePack subset the live speech-synthesis protocol uses: nil, booleans, integers (up to 64
 * bits), floats, UTF-8 strings, binary, arrays and maps with string keys. Extension types are refused.
 *
 * Integers are written in their shortest form; non-integers (and -0) as float64. 64-bit integers
 * beyond Number's safe range decode to bigint. Map entries whose value is undefined are left out.
 */

export type MsgpackValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | MsgpackValue[]
  | { [key: string]: MsgpackValue };

export class MsgpackError extends Error {
  override readonly name = "MsgpackError";
}

const MAX_DEPTH = 64;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

// ---------- encoding ----------

export function encodeMsgpack(value: unknown): Uint8Array {
  const writer = new Writer();
  writeValue(writer, value, 0);
  return writer.finish();
}

class Writer {
  private buffer = new Uint8Array(256);
  private view = new DataView(this.buffer.buffer);
  private length = 0;

  private reserve(extra: number): number {
    const needed = this.length + extra;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.length;
    this.length = needed;
    return at;
  }

  // reserve() may swap in a bigger buffer: take the offset before touching this.buffer/this.view.
  u8(v: number): void {
    const at = this.reserve(1);
    this.buffer[at] = v;
  }
  u16(v: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, v);
  }
  u32(v: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, v);
  }
  i8(v: number): void {
    const at = this.reserve(1);
    this.view.setInt8(at, v);
  }
  i16(v: number): void {
    const at = this.reserve(2);
    this.view.setInt16(at, v);
  }
  i32(v: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, v);
  }
  u64(v: bigint): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, v);
  }
  i64(v: bigint): void {
    const at = this.reserve(8);
    this.view.setBigInt64(at, v);
  }
  f64(v: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, v);
  }
  bytes(b: Uint8Array): void {
    const at = this.reserve(b.length);
    this.buffer.set(b, at);
  }
  finish(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

function writeValue(w: Writer, value: unknown, depth: number): void {
  if (depth > MAX_DEPTH) throw new MsgpackError("value nested too deeply");
  if (value === null || value === undefined) w.u8(0xc0);
  else if (typeof value === "boolean") w.u8(value ? 0xc3 : 0xc2);
  else if (typeof value === "number") writeNumber(w, value);
  else if (typeof value === "bigint") writeBigInt(w, value);
  else if (typeof value === "string") writeString(w, value);
  else if (value instanceof Uint8Array) writeBinary(w, value);
  else if (Array.isArray(value)) {
    writeHeader(w, value.length, 0x90, 15, 0xdc, 0xdd);
    for (const item of value) writeValue(w, item, depth + 1);
  } else if (typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    writeHeader(w, entries.length, 0x80, 15, 0xde, 0xdf);
    for (const [key, item] of entries) {
      writeString(w, key);
      writeValue(w, item, depth + 1);
    }
  } else {
    throw new MsgpackError(`cannot encode a ${typeof value}`);
  }
}

function writeNumber(w: Writer, v: number): void {
  if (!Number.isSafeInteger(v) || Object.is(v, -0)) {
    w.u8(0xcb);
    w.f64(v);
  } else if (v >= 0) {
    writeUnsigned(w, v);
  } else {
    writeNegative(w, v);
  }
}

function writeUnsigned(w: Writer, v: number): void {
  if (v < 0x80) {
    w.u8(v);
  } else if (v <= 0xff) {
    w.u8(0xcc);
    w.u8(v);
  } else if (v <= 0xffff) {
    w.u8(0xcd);
    w.u16(v);
  } else if (v <= 0xffffffff) {
    w.u8(0xce);
    w.u32(v);
  } else {
    w.u8(0xcf);
    w.u64(BigInt(v));
  }
}

function writeNegative(w: Writer, v: number): void {
  if (v >= -32) {
    w.i8(v);
  } else if (v >= -0x80) {
    w.u8(0xd0);
    w.i8(v);
  } else if (v >= -0x8000) {
    w.u8(0xd1);
    w.i16(v);
  } else if (v >= -0x80000000) {
    w.u8(0xd2);
    w.i32(v);
  } else {
    w.u8(0xd3);
    w.i64(BigInt(v));
  }
}

function writeBigInt(w: Writer, v: bigint): void {
  if (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    writeNumber(w, Number(v));
  } else if (v >= 0n && v < 1n << 64n) {
    w.u8(0xcf);
    w.u64(v);
  } else if (v < 0n && v >= -(1n << 63n)) {
    w.u8(0xd3);
    w.i64(v);
  } else {
    throw new MsgpackError("integer does not fit in 64 bits");
  }
}

function writeString(w: Writer, s: string): void {
  const utf8 = textEncoder.encode(s);
  if (utf8.length < 32) {
    w.u8(0xa0 | utf8.length);
  } else if (utf8.length <= 0xff) {
    w.u8(0xd9);
    w.u8(utf8.length);
  } else {
    writeSized(w, utf8.length, 0xda, 0xdb);
  }
  w.bytes(utf8);
}

function writeBinary(w: Writer, b: Uint8Array): void {
  if (b.length <= 0xff) {
    w.u8(0xc4);
    w.u8(b.length);
  } else {
    writeSized(w, b.length, 0xc5, 0xc6);
  }
  w.bytes(b);
}

function writeHeader(
  w: Writer,
  count: number,
  fix: number,
  fixMax: number,
  code16: number,
  code32: number,
): void {
  if (count <= fixMax) w.u8(fix | count);
  else writeSized(w, count, code16, code32);
}

function writeSized(w: Writer, size: number, code16: number, code32: number): void {
  if (size > 0xffffffff) throw new MsgpackError("object too large");
  if (size <= 0xffff) {
    w.u8(code16);
    w.u16(size);
  } else {
    w.u8(code32);
    w.u32(size);
  }
}

// ---------- decoding ----------

/** Decodes exactly one value; trailing bytes are an error. */
export function decodeMsgpack(bytes: Uint8Array): MsgpackValue {
  const reader = new Reader(bytes);
  const value = readValue(reader, 0);
  if (reader.offset !== bytes.length)
    throw new MsgpackError(`${bytes.length - reader.offset} trailing bytes`);
  return value;
}

class Reader {
  offset = 0;
  private readonly view: DataView;

  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  get remaining(): number {
    return this.data.length - this.offset;
  }

  private take(n: number): number {
    if (n > this.remaining) throw new MsgpackError("unexpected end of data");
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.view.getUint8(this.take(1));
  }
  u16(): number {
    return this.view.getUint16(this.take(2));
  }
  u32(): number {
    return this.view.getUint32(this.take(4));
  }
  i8(): number {
    return this.view.getInt8(this.take(1));
  }
  i16(): number {
    return this.view.getInt16(this.take(2));
  }
  i32(): number {
    return this.view.getInt32(this.take(4));
  }
  u64(): number | bigint {
    return narrow(this.view.getBigUint64(this.take(8)));
  }
  i64(): number | bigint {
    return narrow(this.view.getBigInt64(this.take(8)));
  }
  f32(): number {
    return this.view.getFloat32(this.take(4));
  }
  f64(): number {
    return this.view.getFloat64(this.take(8));
  }
  bytes(n: number): Uint8Array {
    const at = this.take(n);
    // A plain copy, whatever the input was (a Buffer's slice would be a view of it).
    return new Uint8Array(this.data.subarray(at, at + n));
  }
}

function narrow(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function readValue(r: Reader, depth: number): MsgpackValue {
  if (depth > MAX_DEPTH) throw new MsgpackError("value nested too deeply");
  const code = r.u8();
  if (code <= 0x7f) return code;
  if (code >= 0xe0) return code - 0x100;
  if ((code & 0xe0) === 0xa0) return readString(r, code & 0x1f);
  if ((code & 0xf0) === 0x90) return readArray(r, code & 0x0f, depth);
  if ((code & 0xf0) === 0x80) return readMap(r, code & 0x0f, depth);
  switch (code) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xc4:
      return r.bytes(r.u8());
    case 0xc5:
      return r.bytes(r.u16());
    case 0xc6:
      return r.bytes(r.u32());
    case 0xca:
      return r.f32();
    case 0xcb:
      return r.f64();
    case 0xcc:
      return r.u8();
    case 0xcd:
      return r.u16();
    case 0xce:
      return r.u32();
    case 0xcf:
      return r.u64();
    case 0xd0:
      return r.i8();
    case 0xd1:
      return r.i16();
    case 0xd2:
      return r.i32();
    case 0xd3:
      return r.i64();
    case 0xd9:
      return readString(r, r.u8());
    case 0xda:
      return readString(r, r.u16());
    case 0xdb:
      return readString(r, r.u32());
    case 0xdc:
      return readArray(r, r.u16(), depth);
    case 0xdd:
      return readArray(r, r.u32(), depth);
    case 0xde:
      return readMap(r, r.u16(), depth);
    case 0xdf:
      return readMap(r, r.u32(), depth);
    default:
      // 0xc1 is never used; 0xc7-0xc9 and 0xd4-0xd8 are extension types, outside this subset.
      throw new MsgpackError(`unsupported type byte 0x${code.toString(16)}`);
  }
}

function readString(r: Reader, length: number): string {
  try {
    return textDecoder.decode(r.bytes(length));
  } catch (err) {
    if (err instanceof MsgpackError) throw err;
    throw new MsgpackError("string is not valid UTF-8");
  }
}

function readArray(r: Reader, count: number, depth: number): MsgpackValue[] {
  // Every element takes at least one byte: refuse counts the data cannot hold before allocating.
  if (count > r.remaining) throw new MsgpackError("unexpected end of data");
  const items: MsgpackValue[] = [];
  for (let i = 0; i < count; i++) items.push(readValue(r, depth + 1));
  return items;
}

function readMap(r: Reader, count: number, depth: number): { [key: string]: MsgpackValue } {
  if (count * 2 > r.remaining) throw new MsgpackError("unexpected end of data");
  const map: { [key: string]: MsgpackValue } = {};
  for (let i = 0; i < count; i++) {
    const key = readValue(r, depth + 1);
    if (typeof key !== "string") throw new MsgpackError("map keys must be strings");
    // defineProperty, not assignment: a "__proto__" key must stay an ordinary entry.
    Object.defineProperty(map, key, {
      value: readValue(r, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return map;
}
