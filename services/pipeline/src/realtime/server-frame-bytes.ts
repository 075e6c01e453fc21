import {
  int32FieldSize,
  LENGTH_DELIMITED,
  lengthDelimitedSize,
  text,
  uint32FieldSize,
  varintFieldSize,
  varintSize,
  writeBoolField,
  writeInt32Field,
  writeStringField,
  writeTag,
  writeVarint,
  writeVarintField,
} from "@avatar/contracts/wire";

/**
 * The wire bytes of an avatar.pipeline.v1.ServerFrame, written straight into one buffer
 * (@avatar/contracts/wire): a LITE chunk makes about seven frames (its acknowledgement, the events of its
 * turn). The bytes are those toBinary writes (fields in number order, proto3 zeros left out): the test
 * in server-frame-bytes.test.ts compares them with the generated schema's for every field.
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

export function serverFrameBytes(f: ServerFrameFields): Uint8Array {
  const closeCode = f.closeCode ?? 0;
  const epoch = f.epoch ?? 0;
  const ackSeq = f.ackSeq ?? 0;
  const sessionId = text(f.sessionId);
  const connectionId = text(f.connectionId);
  const json = text(f.json);
  const closeReason = text(f.closeReason);
  const acks = (f.acks ?? []).map((a) => {
    const id = text(a.connectionId);
    return { id, seq: a.seq, length: lengthDelimitedSize(id.bytes) + varintFieldSize(a.seq) };
  });

  let size =
    lengthDelimitedSize(sessionId.bytes) +
    lengthDelimitedSize(connectionId.bytes) +
    lengthDelimitedSize(json.bytes) +
    (f.close ? 2 : 0) +
    int32FieldSize(closeCode) +
    lengthDelimitedSize(closeReason.bytes) +
    uint32FieldSize(epoch) +
    varintFieldSize(ackSeq) +
    (f.resend ? 2 : 0);
  for (const a of acks) size += 1 + varintSize(a.length) + a.length;

  const out = Buffer.allocUnsafe(size);
  let at = 0;
  at = writeStringField(out, at, 1, sessionId);
  at = writeStringField(out, at, 2, connectionId);
  at = writeStringField(out, at, 3, json);
  at = writeBoolField(out, at, 4, f.close);
  at = writeInt32Field(out, at, 5, closeCode);
  at = writeStringField(out, at, 6, closeReason);
  at = writeVarintField(out, at, 7, epoch);
  at = writeVarintField(out, at, 8, ackSeq);
  at = writeBoolField(out, at, 9, f.resend);
  for (const a of acks) {
    // Every ack is written, even one that is all zeros (as toBinary writes a repeated message).
    at = writeVarint(out, writeTag(out, at, 10, LENGTH_DELIMITED), a.length);
    at = writeStringField(out, at, 1, a.id);
    at = writeVarintField(out, at, 2, a.seq);
  }
  if (at !== size) throw new Error(`ServerFrame: wrote ${at} bytes of ${size}`);
  return out;
}
