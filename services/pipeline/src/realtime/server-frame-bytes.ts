/**
 * The wire bytes of an avatar.pipeline.v1.ServerFrame, written straight into one buffer. A LITE chunk
 * makes about seven frames (its acknowledgement, the events of its turn), and protobuf-es's create and
 * toBinary took ~17 µs for each here (~12 with its BinaryWriter, whose chunk lists cost as much as the
 * bytes); this takes one length pass and one buffer. The bytes are those toBinary writes (fields in
 * number order, proto3 zeros left out): the test in server-frame-bytes.test.ts compares them with the
 * generated schema's for every field.
 */

export interface ServerFrameFields {
  sessionId: string;
  connectionId?: string;
  json?: string;
  close?: boolean;
  closeCode?: number;
  closeReason?: string;
  epoch?: number;
  ackSeq?: number;
  resend?: boolean;
  acks?: readonly { connectionId: string; seq: number }[];
}

const LENGTH_DELIMITED = 2;
const VARINT = 0;

export function serverFrameBytes(f: ServerFrameFields): Uint8Array {
  const closeCode = f.closeCode ?? 0;
  const epoch = f.epoch ?? 0;
  const ackSeq = f.ackSeq ?? 0;
  // Each string's UTF-8 length is measured once: the size pass and its length prefix both use it.
  const sessionId = text(f.sessionId);
  const connectionId = text(f.connectionId);
  const json = text(f.json);
  const closeReason = text(f.closeReason);
  const acks = (f.acks ?? []).map((a) => {
    const id = text(a.connectionId);
    return { id, seq: a.seq, length: stringSize(id) + (a.seq !== 0 ? 1 + varintSize(a.seq) : 0) };
  });

  let size =
    stringSize(sessionId) +
    stringSize(connectionId) +
    stringSize(json) +
    (f.close ? 2 : 0) +
    (closeCode !== 0 ? 1 + int32Size(closeCode) : 0) +
    stringSize(closeReason) +
    (epoch !== 0 ? 1 + uint32Size(epoch) : 0) +
    (ackSeq !== 0 ? 1 + varintSize(ackSeq) : 0) +
    (f.resend ? 2 : 0);
  for (const a of acks) size += 1 + varintSize(a.length) + a.length;

  const out = Buffer.allocUnsafe(size);
  let at = 0;
  at = writeString(out, at, 1, sessionId);
  at = writeString(out, at, 2, connectionId);
  at = writeString(out, at, 3, json);
  if (f.close) at = writeBool(out, at, 4);
  if (closeCode !== 0) at = writeInt32(out, writeTag(out, at, 5, VARINT), closeCode);
  at = writeString(out, at, 6, closeReason);
  if (epoch !== 0) at = writeVarint(out, writeTag(out, at, 7, VARINT), epoch);
  if (ackSeq !== 0) at = writeVarint(out, writeTag(out, at, 8, VARINT), ackSeq);
  if (f.resend) at = writeBool(out, at, 9);
  for (const a of acks) {
    at = writeVarint(out, writeTag(out, at, 10, LENGTH_DELIMITED), a.length);
    at = writeString(out, at, 1, a.id);
    if (a.seq !== 0) at = writeVarint(out, writeTag(out, at, 2, VARINT), a.seq);
  }
  if (at !== size) throw new Error(`ServerFrame: wrote ${at} bytes of ${size}`);
  return out;
}

interface Text {
  value: string;
  bytes: number;
}

const text = (value = ""): Text => ({ value, bytes: value === "" ? 0 : Buffer.byteLength(value, "utf8") });

/** A string field's bytes with its tag (all field numbers here are below 16: a one-byte tag); 0 when empty. */
function stringSize(t: Text): number {
  return t.bytes === 0 ? 0 : 1 + varintSize(t.bytes) + t.bytes;
}

/** Bytes of a non-negative integer (below 2^53: sequence numbers, lengths) as a varint. */
function varintSize(value: number): number {
  checkUnsigned(value);
  let size = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}

function uint32Size(value: number): number {
  if (value > 0xffffffff) throw new RangeError(`ServerFrame: ${value} is not a uint32`);
  return varintSize(value);
}

/** An int32 is a varint, and a negative one its 64-bit two's complement: ten bytes. */
function int32Size(value: number): number {
  if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw new RangeError(`ServerFrame: ${value} is not an int32`);
  return value < 0 ? 10 : varintSize(value);
}

function checkUnsigned(value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`ServerFrame: ${value} is not a non-negative integer`);
}

function writeTag(out: Buffer, at: number, field: number, wireType: number): number {
  out[at] = (field << 3) | wireType;
  return at + 1;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

function writeInt32(out: Buffer, at: number, value: number): number {
  if (value >= 0) return writeVarint(out, at, value);
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out[at++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[at++] = Number(v);
  return at;
}

function writeBool(out: Buffer, at: number, field: number): number {
  out[writeTag(out, at, field, VARINT)] = 1;
  return at + 2;
}

function writeString(out: Buffer, at: number, field: number, t: Text): number {
  if (t.bytes === 0) return at;
  const start = writeVarint(out, writeTag(out, at, field, LENGTH_DELIMITED), t.bytes);
  return start + out.write(t.value, start, t.bytes, "utf8");
}
