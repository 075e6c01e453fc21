import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

/**
 * patches/ws@8.23.0.patch: ws's receiver collects a message's frames in a list that it made when the
 * previous message ended, so on a socket that receives a message now and then the list is old by the
 * time it is filled. Once the message is out, that dead old list kept the message's buffer alive until
 * the next full garbage collection: on the gateway under LITE audio, a mark-compact a second, each
 * started for "external memory pressure" (README, Performance). The patch empties the list once the
 * message has been taken out of it; these tests fail without it.
 */
interface Receiver {
  _fragments: unknown[];
  write(chunk: Buffer): boolean;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: "error", listener: (err: Error & { code?: string; [status: symbol]: number }) => void): void;
}
const { Receiver } = createRequire(import.meta.url)("ws") as {
  Receiver: new (options: { isServer: boolean; binaryType?: string }) => Receiver;
};

/** One unmasked frame (as a server sends), final, with a payload under 126 bytes. */
function frame(opcode: number, payload: Buffer, fin = true): Buffer {
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode, payload.length]), payload]);
}

/** Writes `frames` and answers the messages they make and the lists their fragments were kept in. */
function receive(receiver: Receiver, frames: Buffer[]) {
  const messages: { text: string; isBinary: boolean; list: unknown[] }[] = [];
  let list = receiver._fragments;
  receiver.on("message", (data, isBinary) => {
    messages.push({ text: data.toString(), isBinary, list });
    list = receiver._fragments;
  });
  for (const f of frames) receiver.write(f);
  return messages;
}

describe("ws's receiver (patched)", () => {
  it("empties a text message's list of fragments once the message is out, one frame or several", () => {
    const receiver = new Receiver({ isServer: false });
    const messages = receive(receiver, [
      frame(1, Buffer.from('{"type":"agent.speak"}')),
      frame(1, Buffer.from('{"type":"agent.'), false),
      frame(0, Buffer.from('speak_end"}')),
    ]);
    expect(messages.map((m) => m.text)).toEqual(['{"type":"agent.speak"}', '{"type":"agent.speak_end"}']);
    for (const m of messages) expect(m.list).toHaveLength(0);
  });

  it("empties a binary message's list too, and the buffer it gave stays whole", () => {
    const receiver = new Receiver({ isServer: false, binaryType: "nodebuffer" });
    const payload = Buffer.from([1, 2, 3, 4, 5]);
    const kept: Buffer[] = [];
    receiver.on("message", (data) => kept.push(data));
    const messages = receive(receiver, [frame(2, payload)]);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.isBinary).toBe(true);
    expect(messages[0]?.list).toHaveLength(0);
    expect(kept[0]).toEqual(payload);
  });

  it("still refuses a text message that is not UTF-8 (1007), its list emptied all the same", async () => {
    const receiver = new Receiver({ isServer: false });
    const list = receiver._fragments;
    const errors: string[] = [];
    receiver.on("error", (err) => errors.push(err.code ?? err.message));
    const messages = receive(receiver, [frame(1, Buffer.from([0x7b, 0xff, 0x7d]))]);
    await new Promise((resolve) => setImmediate(resolve)); // the stream reports its error on a later tick
    expect(messages).toEqual([]);
    expect(errors).toEqual(["WS_ERR_INVALID_UTF8"]);
    expect(list).toHaveLength(0);
  });
});
